// A value used before the op that defines it (in the same block, or in an enclosing one)
// is a diagnostic at the use, as MLIR's dominance rule says; the passes never see it.
// RUN: not %nki-opt %s -p nisa-allocate,nisa-schedule 2>&1 | filecheck %s

func.func @f(%out: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c1 step %c1 {
    nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, value=f32 %zero) engine=vector
  }
  %t = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
  nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %t) engine=dma
  func.return
}
// CHECK:      use-before-def.mlir:10:5: error: operand #0 of 'nisa.memset' does not dominate this use (it is defined after it)
// CHECK-NEXT:     nisa.memset(dst=
// CHECK-NEXT:     ^
// CHECK-NOT:  Traceback
