// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Structural verifiers of the generic nl.* sugar ops.

func.func @bad_fn(%a: memref<128x64xf32, #nisa.mem<sbuf>>) {
  %e = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=cosh) : memref<128x64xf32, #nisa.mem<sbuf>>
  func.return
}
// CHECK: nki.unary: fn=cosh is not supported

// -----

func.func @bad_axis(%a: memref<128x64xf32, #nisa.mem<sbuf>>) {
  %r = nki.reduce(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=sum, axis=[0]) : memref<1x64xf32, #nisa.mem<sbuf>>
  func.return
}
// CHECK: nki.reduce: axis=[0] must be the trailing free axes of a rank-2 tile (1..1), never the partition axis 0

// -----

func.func @hbm_full() {
  %c = arith.constant 1.0 : f32
  %f = nki.full(value=f32 %c) : memref<4x4xf32, #nisa.mem<shared_hbm>>
  func.return
}
// CHECK: nki.full: HBM tensors cannot have an initial value
