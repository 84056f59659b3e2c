// An op that fails its verifier after parsing is reported at its line and column.
// RUN: not %nki-opt %s 2>&1 | filecheck %s

func.func @g() {
  %v8 = nisa.alloc : memref<128x8xf32, #nisa.mem<sbuf>>
  %y = nisa.alloc : memref<128x4xf32, #nisa.mem<sbuf>>
  nisa.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, src=memref<128x4xf32, #nisa.mem<sbuf>> %y) engine=vector
  func.return
}
// CHECK:      verify-located-op.mlir:7:3: error: nisa.max8: 'src' has 4 elements per partition, but nisa.max8 needs 8..16384
// CHECK-NEXT:   nisa.max8(dst=
// CHECK-NEXT:   ^
