// Engine registers and runtime control in the nisa dialect: a register is
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
    %r = nisa.register_alloc(x=5) engine=sync : memref<1xi32, #nisa.mem<reg>>
    %q = nisa.register_alloc() engine=sync : memref<1xi32, #nisa.mem<reg>>
    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7) engine=sync
    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync
    nisa.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt) engine=sync
    nisa.register_load(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xf32, #nisa.mem<hbm>> %f) engine=sync
    nisa.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync
    %n = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync : index
    scf.for %i = %c0 to %n step %c1 {
      nisa.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=index %i) engine=sync
    } {nki.range = "dynamic"}
    scf.while () : () -> () {
      %v = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %q) engine=sync : index
      %b = arith.cmpi ne, %v, %c0 : index
      scf.condition(%b)
    } do {
      nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7) engine=sync
      scf.yield
    } attributes {nki.range = "dynamic"}
    nisa.no_reorder_begin
    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7) engine=sync
    nisa.no_reorder_end
    func.return
  }
}

// CHECK-LABEL: func.func @regs
// CHECK:         %r = nisa.register_alloc(x=5) engine=sync : memref<1xi32, #nisa.mem<reg>>
// CHECK-NEXT:    %q = nisa.register_alloc() engine=sync : memref<1xi32, #nisa.mem<reg>>
// CHECK-NEXT:    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7) engine=sync
// CHECK-NEXT:    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync
// CHECK-NEXT:    nisa.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt) engine=sync
// CHECK-NEXT:    nisa.register_load(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1xf32, #nisa.mem<hbm>> %f) engine=sync
// CHECK-NEXT:    nisa.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync
// CHECK-NEXT:    %n = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync : index
// CHECK-NEXT:    scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      nisa.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %t, src=index %i) engine=sync
// CHECK-NEXT:    } {nki.range = "dynamic"}
// CHECK-NEXT:    scf.while () : () -> () {
// CHECK-NEXT:      %v = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %q) engine=sync : index
// CHECK:           scf.condition(%b)
// CHECK:         } attributes {nki.range = "dynamic"}
// CHECK-NEXT:    nisa.no_reorder_begin
// CHECK-NEXT:    nisa.register_move
// CHECK-NEXT:    nisa.no_reorder_end

// GENERIC: "nisa.register_alloc"() <{x = 5 : i64, engine = "sync"}> : () -> memref<1xi32, #nisa.mem<reg>>
// GENERIC: "nisa.register_read"(%{{.*}}) <{engine = "sync"}> : (memref<1xi32, #nisa.mem<reg>>) -> index
// GENERIC: "nisa.no_reorder_begin"() : () -> ()
