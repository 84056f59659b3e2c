// The view / indirect-DMA ops of the nisa dialect (dialects/views.py), with optional
// operands and properties present and absent, round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @views(%table: memref<500x64xf32, #nisa.mem<shared_hbm>>, %out: memref<500x64xf32, #nisa.mem<hbm>>) {
    %t = nisa.alloc : memref<128x64xi32, #nisa.mem<sbuf>>
    %g = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
    %ix = nisa.alloc : memref<128x1xi32, #nisa.mem<sbuf>>
    %v = nisa.view_dtype(source=memref<128x64xi32, #nisa.mem<sbuf>> %t) : memref<128x128xbf16, #nisa.mem<sbuf>>
    %s = memref.subview %t[0, 8] [128, 16] [1, 1] : memref<128x64xi32, #nisa.mem<sbuf>> to memref<128x16xi32, strided<[64, 1], offset: 8>, #nisa.mem<sbuf>>
    %w = nisa.view_dtype(source=memref<128x16xi32, strided<[64, 1], offset: 8>, #nisa.mem<sbuf>> %s) : memref<128x64xi8, strided<[256, 1], offset: 32>, #nisa.mem<sbuf>>
    nisa.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %table, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix) engine=dma
    nisa.dma_copy_indirect(dst=memref<500x64xf32, #nisa.mem<hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %g, dst_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix, oob_is_err=false, dge_mode=swdge) engine=gpsimd
    func.return
  }
}

// CHECK:      %v = nisa.view_dtype(source=memref<128x64xi32, #nisa.mem<sbuf>> %t) : memref<128x128xbf16, #nisa.mem<sbuf>>
// CHECK:      %w = nisa.view_dtype(source=memref<128x16xi32, strided<[64, 1], offset: 8>, #nisa.mem<sbuf>> %s) : memref<128x64xi8, strided<[256, 1], offset: 32>, #nisa.mem<sbuf>>
// CHECK-NEXT: nisa.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %table, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix) engine=dma
// CHECK-NEXT: nisa.dma_copy_indirect(dst=memref<500x64xf32, #nisa.mem<hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %g, dst_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix, oob_is_err=false, dge_mode=swdge) engine=gpsimd

// GENERIC: "nisa.view_dtype"(%{{.*}}) : (memref<128x64xi32, #nisa.mem<sbuf>>) -> memref<128x128xbf16, #nisa.mem<sbuf>>
// GENERIC: "nisa.dma_copy_indirect"(%{{.*}}, %{{.*}}, %{{.*}}) <{engine = "dma", operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// GENERIC: "nisa.dma_copy_indirect"(%{{.*}}, %{{.*}}, %{{.*}}) <{oob_is_err = false, dge_mode = "swdge", engine = "gpsimd", operandSegmentSizes = array<i32: 1, 1, 0, 1>}>
