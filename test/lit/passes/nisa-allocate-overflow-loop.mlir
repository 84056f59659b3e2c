// nisa-allocate and capacity: multi-buffered tensors give up copies before anything
// is reported.  The overflow error comes only when one copy each does not fit either,
// and then lists the single-copy sizes.  (spill=false: with
// spilling on, x is kept in HBM over the loop: nisa-allocate-spill.mlir.)
// RUN: %nki-opt %s --split-input-file -p 'nisa-allocate{spill=false}' --verify-diagnostics | filecheck %s
// RUN: not %nki-opt %s --split-input-file -p 'nisa-allocate{spill=false}' 2>&1 | filecheck %s --check-prefix=EXIT

// Two copies of u (2 x 120000 bytes) do not fit in trn2's 212984: one copy does.
// CHECK-LABEL: func.func @falls_back
// CHECK:         %u = nisa.alloc alignment=64 {nkim.name = "u", nkim.partition = 0 : i64, nkim.offset = 0 : i64} : memref<128x30000xf32, #nisa.mem<sbuf>>
// A smaller one in the same loop keeps its 2 copies.
// CHECK:         %v = nisa.alloc copy(%i) alignment=64 {nkim.name = "v", nkim.partition = 0 : i64, nkim.offset = 120000 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 4096 : i64}
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @falls_back() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c2 step %c1 {
      %u = nisa.alloc {nkim.name = "u"} : memref<128x30000xf32, #nisa.mem<sbuf>> loc("k.py":5:8)
      %v = nisa.alloc {nkim.name = "v"} : memref<128x1024xf32, #nisa.mem<sbuf>> loc("k.py":6:8)
      nisa.memset(dst=memref<128x30000xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector
      nisa.memset(dst=memref<128x1024xf32, #nisa.mem<sbuf>> %v, value=f32 %zero) engine=vector
    } {nki.range = "affine"}
    func.return
  }
}

// -----

// With x (100000 bytes) live across the loop, even one copy of u does not fit.  v is
// not listed: sunk to its first use (its memset, after u's), it is not live with u.
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @overflows() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f32
    %x = nisa.alloc {nkim.name = "x"} : memref<128x25000xf32, #nisa.mem<sbuf>> loc("k.py":3:4)
    nisa.memset(dst=memref<128x25000xf32, #nisa.mem<sbuf>> %x, value=f32 %zero) engine=vector
    scf.for %i = %c0 to %c2 step %c1 {
      %v = nisa.alloc {nkim.name = "v"} : memref<128x1024xf32, #nisa.mem<sbuf>> loc("k.py":5:8)
      %u = nisa.alloc {nkim.name = "u"} : memref<128x30000xf32, #nisa.mem<sbuf>> loc("k.py":6:8)
      nisa.memset(dst=memref<128x30000xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector
      nisa.memset(dst=memref<128x1024xf32, #nisa.mem<sbuf>> %v, value=f32 %zero) engine=vector
    } {nki.range = "affine"}
    nisa.release %x : memref<128x25000xf32, #nisa.mem<sbuf>>
    func.return
  }
}
// CHECK:      {{^}}k.py:6:8: out of memory: cannot place tensor 'u' in SBUF: the tensors live at the same time need 220000 bytes per partition, but SBUF on trn2 has 212984 bytes per partition
// CHECK-NEXT: largest live tensors:
// CHECK-NEXT:   'u' [128, 30000] float32: 120000 bytes per partition at k.py:6
// CHECK-NEXT:   'x' [128, 25000] float32: 100000 bytes per partition at k.py:3
// CHECK-NOT:    'v'
// EXIT:       k.py:6:8: out of memory: cannot place tensor 'u' in SBUF
// EXIT-NOT:   copies
// EXIT-NOT:   Traceback
