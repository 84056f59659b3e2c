// The data-movement ops of the nki dialect (dialects/isa_movement.py), with optional
// properties and engines present and absent, round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

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
// CHECK: nki.dma_transpose(dst=memref<96x64xbf16, #nisa.mem<sbuf>> %t, src=memref<64x96xbf16, #nisa.mem<shared_hbm>> %h)
// CHECK-NEXT: nki.dma_transpose(dst=memref<128x3x2xf16, #nisa.mem<sbuf>> %t3, src=memref<2x3x128xf16, #nisa.mem<hbm>> %h3, axes=[2, 1, 0], priority=1, dge_mode=unknown, oob_mode=error)
// CHECK-NEXT: nki.dma_transpose(dst=memref<16x3x4x2xbf16, #nisa.mem<sbuf>> %t4, src=memref<2x3x4x16xbf16, #nisa.mem<hbm>> %h4, axes=[3, 1, 2, 0])
// CHECK-NEXT: nki.dma_transpose(dst=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, src=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, dge_mode=hwdge)
// CHECK-NEXT: nki.dma_compute(dst=memref<128x512xf32, #nisa.mem<hbm>> %o, srcs=[memref<128x512xf32, #nisa.mem<sbuf>> %a, memref<128x512xbf16, #nisa.mem<sbuf>> %b], reduce_op=add)
// CHECK-NEXT: nki.dma_compute(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, srcs=[memref<128x512xf32, #nisa.mem<hbm>> %o], reduce_op=add, scales=[1.0], unique_indices=false, oob_mode=skip)
// CHECK-NEXT: nki.nc_n_gather(dst=memref<128x16xf32, #nisa.mem<sbuf>> %g, data=memref<128x4x8xf32, #nisa.mem<sbuf>> %d, indices=memref<128x16xui32, #nisa.mem<sbuf>> %i) engine=gpsimd
// CHECK-NEXT: nki.local_gather(dst=memref<128x256xbf16, #nisa.mem<sbuf>> %lg, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=4)
// CHECK-NEXT: nki.local_gather(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %lg1, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=2, num_valid_indices=32)
// CHECK-NEXT: nki.nc_stream_shuffle(dst=memref<64x32xf32, #nisa.mem<sbuf>> %r, src=memref<64x32xf32, #nisa.mem<psum>> %q, shuffle_mask=[1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 17, 16, 19, 18, 21, 20, 23, 22, 25, 24, 27, 26, 29, 28, 31, 255])
// CHECK-NEXT: nki.dma_copy(dst=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, src=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, dge_mode=hwdge) engine=sync
// CHECK-NEXT: nki.dma_copy(dst=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, src=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, dge_mode=hwdge)
// GENERIC: "nki.dma_transpose"(%t, %h)
// GENERIC: "nki.dma_transpose"(%t3, %h3) <{axes = [2 : i64, 1 : i64, 0 : i64], priority = 1 : i64, dge_mode = "unknown", oob_mode = "error"}>
// GENERIC: "nki.dma_transpose"(%t4, %h4) <{axes = [3 : i64, 1 : i64, 2 : i64, 0 : i64]}>
// GENERIC: "nki.dma_transpose"(%t16, %s16) <{dge_mode = "hwdge"}>
// GENERIC: "nki.dma_compute"(%o, %a, %b) <{reduce_op = "add"}>
// GENERIC: "nki.dma_compute"(%a, %o) <{reduce_op = "add", scales = [1.000000e+00 : f64], unique_indices = false, oob_mode = "skip"}>
// GENERIC: "nki.nc_n_gather"(%g, %d, %i) <{engine = "gpsimd"}>
// GENERIC: "nki.local_gather"(%lg, %src, %idx) <{num_elem_per_idx = 4 : i64}>
// GENERIC: "nki.local_gather"(%lg1, %src, %idx) <{num_elem_per_idx = 2 : i64, num_valid_indices = 32 : i64}>
// GENERIC: "nki.nc_stream_shuffle"(%r, %q) <{shuffle_mask = [1 : i64, 0 : i64, 3 : i64, 2 : i64, 5 : i64, 4 : i64, 7 : i64, 6 : i64, 9 : i64, 8 : i64, 11 : i64, 10 : i64, 13 : i64, 12 : i64, 15 : i64, 14 : i64, 17 : i64, 16 : i64, 19 : i64, 18 : i64, 21 : i64, 20 : i64, 23 : i64, 22 : i64, 25 : i64, 24 : i64, 27 : i64, 26 : i64, 29 : i64, 28 : i64, 31 : i64, 255 : i64]}>
// GENERIC: "nki.dma_copy"(%s16, %t16) <{dge_mode = "hwdge", engine = "sync"}>
// GENERIC: "nki.dma_copy"(%s16, %t16) <{dge_mode = "hwdge"}>
