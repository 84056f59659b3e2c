// A value defined in a function and used by an op at module level (before the function)
// is a diagnostic at the use, not an internal error of a pass.
// RUN: not %nki-opt %s -p nisa-allocate,nisa-schedule 2>&1 | filecheck %s

nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=gpsimd
func.func @g() {
  %zero = arith.constant 0.0 : f32
  %u = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
  func.return
}
// CHECK:      use-outside-function.mlir:5:1: error: operand #0 of 'nisa.memset' does not dominate this use (it is defined in a region that does not enclose it)
// CHECK-NOT:  Traceback
