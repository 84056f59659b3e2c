// Engine registers and runtime control in the nki dialect (no engine=; lower-nki-to-nisa
// picks sync; the no_reorder markers are shared with nisa): a register is
// memref<1xi32, #nisa.mem<reg>>; register_read turns its value into an index for loop
// bounds; no_reorder is a begin/end marker pair.  Round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @regs(%cnt: memref<1x1xi32, #nisa.mem<shared_hbm>>, %f: memref<1xf32, #nisa.mem<hbm>>) {
    %c7 = arith.constant 7 : i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = nisa.alloc alignment=64 : memref<1x1xi32, #nisa.mem<sbuf>>
    %r = nki.register_alloc(x=5) : memref<1xi32, #nisa.mem<reg>>
    %q = nki.register_alloc() : memref<1xi32, #nisa.mem<reg>>
    nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7)
    nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xi32, #nisa.mem<reg>> %r)
    nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt)
    nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xf32, #nisa.mem<hbm>> %f)
    nki.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=memref<1xi32, #nisa.mem<reg>> %r)
    %n = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) : index
    scf.for %i = %c0 to %n step %c1 {
      nki.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=index %i)
    } {nki.range = "dynamic"}
    scf.while () : () -> () {
      %v = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %q) : index
      %b = arith.cmpi ne, %v, %c0 : index
      scf.condition(%b)
    } do {
      nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7)
      scf.yield
    } attributes {nki.range = "dynamic"}
    nisa.no_reorder_begin
    nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7)
    nisa.no_reorder_end
    func.return
  }
}

// CHECK-LABEL: func.func @regs
// CHECK:         %r = nki.register_alloc(x=5) : memref<1xi32, #nisa.mem<reg>>
// CHECK-NEXT:    %q = nki.register_alloc() : memref<1xi32, #nisa.mem<reg>>
// CHECK-NEXT:    nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7)
// CHECK-NEXT:    nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xi32, #nisa.mem<reg>> %r)
// CHECK-NEXT:    nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt)
// CHECK-NEXT:    nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xf32, #nisa.mem<hbm>> %f)
// CHECK-NEXT:    nki.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=memref<1xi32, #nisa.mem<reg>> %r)
// CHECK-NEXT:    %n = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) : index
// CHECK-NEXT:    scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      nki.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=index %i)
// CHECK-NEXT:    } {nki.range = "dynamic"}
// CHECK-NEXT:    scf.while () : () -> () {
// CHECK-NEXT:      %v = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %q) : index
// CHECK:           scf.condition(%b)
// CHECK:         } attributes {nki.range = "dynamic"}
// CHECK-NEXT:    nisa.no_reorder_begin
// CHECK-NEXT:    nki.register_move
// CHECK-NEXT:    nisa.no_reorder_end

// GENERIC: "nki.register_alloc"() <{x = 5 : i64}> : () -> memref<1xi32, #nisa.mem<reg>>
// GENERIC: "nki.register_read"(%{{.*}}) : (memref<1xi32, #nisa.mem<reg>>) -> index
// GENERIC: "nisa.no_reorder_begin"() : () -> ()
