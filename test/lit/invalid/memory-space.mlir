// An unknown memory space is a parse error: nki-opt prints the located message on
// stderr and exits 1 (no Python traceback).
// RUN: not %nki-opt %s 2>&1 | filecheck %s

func.func @f() {
  %a = nisa.alloc : memref<128x512xf32, #nisa.mem<dram>>
  func.return
}
// CHECK:      memory-space.mlir:6:51
// CHECK-NEXT:   %a = nisa.alloc : memref<128x512xf32, #nisa.mem<dram>>
// CHECK:      unknown memory space 'dram', expected one of hbm, private_hbm, shared_hbm, sbuf, psum
// CHECK-NOT:  Traceback
