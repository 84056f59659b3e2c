// The view / indirect-DMA ops of the nki dialect (dialects/views.py), with optional
// operands and properties present and absent, round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @views(%table: memref<500x64xf32, #nisa.mem<shared_hbm>>, %out: memref<500x64xf32, #nisa.mem<hbm>>) {
    %t = nki.ndarray() : memref<128x64xi32, #nisa.mem<sbuf>>
    %g = nki.ndarray() : memref<128x64xf32, #nisa.mem<sbuf>>
    %ix = nki.ndarray() : memref<128x1xi32, #nisa.mem<sbuf>>
    %v = nki.view_dtype(source=memref<128x64xi32, #nisa.mem<sbuf>> %t) : memref<128x128xbf16, #nisa.mem<sbuf>>
    %s = memref.subview %t[0, 8] [128, 16] [1, 1] : memref<128x64xi32, #nisa.mem<sbuf>> to memref<128x16xi32, strided<[64, 1], offset: 8>, #nisa.mem<sbuf>>
    %w = nki.view_dtype(source=memref<128x16xi32, strided<[64, 1], offset: 8>, #nisa.mem<sbuf>> %s) : memref<128x64xi8, strided<[256, 1], offset: 32>, #nisa.mem<sbuf>>
    nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %table, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix)
    nki.dma_copy_indirect(dst=memref<500x64xf32, #nisa.mem<hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %g, dst_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix, oob_mode=skip, dge_mode=swdge) engine=gpsimd
    func.return
  }
}

// CHECK:      %v = nki.view_dtype(source=memref<128x64xi32, #nisa.mem<sbuf>> %t) : memref<128x128xbf16, #nisa.mem<sbuf>>
// CHECK:      %w = nki.view_dtype(source=memref<128x16xi32, strided<[64, 1], offset: 8>, #nisa.mem<sbuf>> %s) : memref<128x64xi8, strided<[256, 1], offset: 32>, #nisa.mem<sbuf>>
// CHECK-NEXT: nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %table, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix)
// CHECK-NEXT: nki.dma_copy_indirect(dst=memref<500x64xf32, #nisa.mem<hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %g, dst_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix, oob_mode=skip, dge_mode=swdge) engine=gpsimd

// GENERIC: "nki.view_dtype"(%{{.*}}) : (memref<128x64xi32, #nisa.mem<sbuf>>) -> memref<128x128xbf16, #nisa.mem<sbuf>>
// GENERIC: "nki.dma_copy_indirect"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// GENERIC: "nki.dma_copy_indirect"(%{{.*}}, %{{.*}}, %{{.*}}) <{oob_mode = "skip", dge_mode = "swdge", engine = "gpsimd", operandSegmentSizes = array<i32: 1, 1, 0, 1>}>
