// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// The data-movement ops lower 1:1 to their nisa twins (same operands and properties);
// engines: dma for dma_transpose / dma_compute, gpsimd for nc_n_gather / local_gather,
// vector for nc_stream_shuffle.  A hwdge dma_copy keeps the sync / scalar engine it was given.

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @movement(%h: memref<64x96xbf16, #nisa.mem<shared_hbm>>, %h3: memref<2x3x128xf16, #nisa.mem<hbm>>, %h4: memref<2x3x4x16xbf16, #nisa.mem<hbm>>) {
    %t = nki.ndarray() : memref<96x64xbf16, #nisa.mem<sbuf>>
    %t3 = nki.ndarray() : memref<128x3x2xf16, #nisa.mem<sbuf>>
    %t4 = nki.ndarray() : memref<16x3x4x2xbf16, #nisa.mem<sbuf>>
    %s16 = nki.ndarray() : memref<16x128xbf16, #nisa.mem<sbuf>>
    %t16 = nki.ndarray() : memref<128x16xbf16, #nisa.mem<sbuf>>
    %a = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nki.ndarray() : memref<128x512xbf16, #nisa.mem<sbuf>>
    %o = nki.ndarray() : memref<128x512xf32, #nisa.mem<hbm>>
    %d = nki.ndarray() : memref<128x4x8xf32, #nisa.mem<sbuf>>
    %i = nki.ndarray() : memref<128x16xui32, #nisa.mem<sbuf>>
    %g = nki.ndarray() : memref<128x16xf32, #nisa.mem<sbuf>>
    %src = nki.ndarray() : memref<128x512xbf16, #nisa.mem<sbuf>>
    %idx = nki.ndarray() : memref<128x4xui16, #nisa.mem<sbuf>>
    %lg = nki.ndarray() : memref<128x256xbf16, #nisa.mem<sbuf>>
    %lg1 = nki.ndarray() : memref<128x64xbf16, #nisa.mem<sbuf>>
    %q = nki.ndarray() : memref<64x32xf32, #nisa.mem<psum>>
    %r = nki.ndarray() : memref<64x32xf32, #nisa.mem<sbuf>>
    nki.dma_transpose(dst=memref<96x64xbf16, #nisa.mem<sbuf>> %t, src=memref<64x96xbf16, #nisa.mem<shared_hbm>> %h)
    nki.dma_transpose(dst=memref<128x3x2xf16, #nisa.mem<sbuf>> %t3, src=memref<2x3x128xf16, #nisa.mem<hbm>> %h3, axes=[2, 1, 0], priority=1, dge_mode=unknown, oob_mode=error)
    nki.dma_transpose(dst=memref<16x3x4x2xbf16, #nisa.mem<sbuf>> %t4, src=memref<2x3x4x16xbf16, #nisa.mem<hbm>> %h4, axes=[3, 1, 2, 0])
    nki.dma_transpose(dst=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, src=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, dge_mode=hwdge)
    nki.dma_compute(dst=memref<128x512xf32, #nisa.mem<hbm>> %o, srcs=[memref<128x512xf32, #nisa.mem<sbuf>> %a, memref<128x512xbf16, #nisa.mem<sbuf>> %b], reduce_op=add)
    nki.dma_compute(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, srcs=[memref<128x512xf32, #nisa.mem<hbm>> %o], reduce_op=add, scales=[1.0], unique_indices=false, oob_mode=skip)
    nki.nc_n_gather(dst=memref<128x16xf32, #nisa.mem<sbuf>> %g, data=memref<128x4x8xf32, #nisa.mem<sbuf>> %d, indices=memref<128x16xui32, #nisa.mem<sbuf>> %i) engine=gpsimd
    nki.local_gather(dst=memref<128x256xbf16, #nisa.mem<sbuf>> %lg, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=4)
    nki.local_gather(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %lg1, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=2, num_valid_indices=32)
    nki.nc_stream_shuffle(dst=memref<64x32xf32, #nisa.mem<sbuf>> %r, src=memref<64x32xf32, #nisa.mem<psum>> %q, shuffle_mask=[1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 17, 16, 19, 18, 21, 20, 23, 22, 25, 24, 27, 26, 29, 28, 31, 255])
    nki.dma_copy(dst=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, src=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, dge_mode=hwdge) engine=sync
    nki.dma_copy(dst=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, src=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, dge_mode=hwdge)
    func.return
  }
}

// CHECK-LABEL: func.func @movement
// CHECK: nisa.dma_transpose(dst=memref<96x64xbf16, #nisa.mem<sbuf>> %t, src=memref<64x96xbf16, #nisa.mem<shared_hbm>> %h) engine=dma
// CHECK-NEXT: nisa.dma_transpose(dst=memref<128x3x2xf16, #nisa.mem<sbuf>> %t3, src=memref<2x3x128xf16, #nisa.mem<hbm>> %h3, axes=[2, 1, 0], priority=1, dge_mode=unknown, oob_mode=error) engine=dma
// CHECK-NEXT: nisa.dma_transpose(dst=memref<16x3x4x2xbf16, #nisa.mem<sbuf>> %t4, src=memref<2x3x4x16xbf16, #nisa.mem<hbm>> %h4, axes=[3, 1, 2, 0]) engine=dma
// CHECK-NEXT: nisa.dma_transpose(dst=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, src=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, dge_mode=hwdge) engine=dma
// CHECK-NEXT: nisa.dma_compute(dst=memref<128x512xf32, #nisa.mem<hbm>> %o, srcs=[memref<128x512xf32, #nisa.mem<sbuf>> %a, memref<128x512xbf16, #nisa.mem<sbuf>> %b], reduce_op=add) engine=dma
// CHECK-NEXT: nisa.dma_compute(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, srcs=[memref<128x512xf32, #nisa.mem<hbm>> %o], reduce_op=add, scales=[1.0], unique_indices=false, oob_mode=skip) engine=dma
// CHECK-NEXT: nisa.nc_n_gather(dst=memref<128x16xf32, #nisa.mem<sbuf>> %g, data=memref<128x4x8xf32, #nisa.mem<sbuf>> %d, indices=memref<128x16xui32, #nisa.mem<sbuf>> %i) engine=gpsimd
// CHECK-NEXT: nisa.local_gather(dst=memref<128x256xbf16, #nisa.mem<sbuf>> %lg, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=4) engine=gpsimd
// CHECK-NEXT: nisa.local_gather(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %lg1, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=2, num_valid_indices=32) engine=gpsimd
// CHECK-NEXT: nisa.nc_stream_shuffle(dst=memref<64x32xf32, #nisa.mem<sbuf>> %r, src=memref<64x32xf32, #nisa.mem<psum>> %q, shuffle_mask=[1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 17, 16, 19, 18, 21, 20, 23, 22, 25, 24, 27, 26, 29, 28, 31, 255]) engine=vector
// CHECK-NEXT: nisa.dma_copy(dst=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, src=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, dge_mode=hwdge, oob_is_err=true) engine=sync
// CHECK-NEXT: nisa.dma_copy(dst=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, src=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, dge_mode=hwdge, oob_is_err=true) engine=dma
// CHECK-NOT: nki.
