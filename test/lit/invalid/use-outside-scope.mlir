// A value used outside the region that defines it (here: defined in a loop body, used
// after the loop) is a diagnostic at the use, as MLIR's dominance rule says; the passes
// never see it.
// RUN: not %nki-opt %s -p nisa-allocate,nisa-schedule 2>&1 | filecheck %s

func.func @f(%out: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    %t = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
  }
  nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %t) engine=dma
  func.return
}
// xDSL's parser scopes names by region: a diagnostic at the use, not at the end of the file
// CHECK:      use-outside-scope.mlir:12:109: error: use of undefined value '%t' (no definition of it in a region that encloses this use)
// CHECK-NEXT:   nisa.dma_copy(dst=
// CHECK-NEXT: {{^ {108}\^$}}
