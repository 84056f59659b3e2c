// The data-movement ops of the nisa dialect (dialects/isa_movement.py), with optional
// properties present and absent, round-tripped custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @movement(%h: memref<64x96xbf16, #nisa.mem<shared_hbm>>, %h3: memref<2x3x128xf16, #nisa.mem<hbm>>, %h4: memref<2x3x4x16xbf16, #nisa.mem<hbm>>) {
    %t = nisa.alloc : memref<96x64xbf16, #nisa.mem<sbuf>>
    %t3 = nisa.alloc : memref<128x3x2xf16, #nisa.mem<sbuf>>
    %t4 = nisa.alloc : memref<16x3x4x2xbf16, #nisa.mem<sbuf>>
    %s16 = nisa.alloc : memref<16x128xbf16, #nisa.mem<sbuf>>
    %t16 = nisa.alloc : memref<128x16xbf16, #nisa.mem<sbuf>>
    %a = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
    %o = nisa.alloc : memref<128x512xf32, #nisa.mem<hbm>>
    %d = nisa.alloc : memref<128x4x8xf32, #nisa.mem<sbuf>>
    %i = nisa.alloc : memref<128x16xui32, #nisa.mem<sbuf>>
    %g = nisa.alloc : memref<128x16xf32, #nisa.mem<sbuf>>
    %src = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
    %idx = nisa.alloc : memref<128x4xui16, #nisa.mem<sbuf>>
    %lg = nisa.alloc : memref<128x256xbf16, #nisa.mem<sbuf>>
    %lg1 = nisa.alloc : memref<128x64xbf16, #nisa.mem<sbuf>>
    %q = nisa.alloc : memref<64x32xf32, #nisa.mem<psum>>
    %r = nisa.alloc : memref<64x32xf32, #nisa.mem<sbuf>>
    nisa.dma_transpose(dst=memref<96x64xbf16, #nisa.mem<sbuf>> %t, src=memref<64x96xbf16, #nisa.mem<shared_hbm>> %h) engine=dma
    nisa.dma_transpose(dst=memref<128x3x2xf16, #nisa.mem<sbuf>> %t3, src=memref<2x3x128xf16, #nisa.mem<hbm>> %h3, axes=[2, 1, 0], priority=1, dge_mode=unknown, oob_mode=error) engine=dma
    nisa.dma_transpose(dst=memref<16x3x4x2xbf16, #nisa.mem<sbuf>> %t4, src=memref<2x3x4x16xbf16, #nisa.mem<hbm>> %h4, axes=[3, 1, 2, 0]) engine=dma
    nisa.dma_transpose(dst=memref<128x16xbf16, #nisa.mem<sbuf>> %t16, src=memref<16x128xbf16, #nisa.mem<sbuf>> %s16, dge_mode=hwdge) engine=dma
    nisa.dma_compute(dst=memref<128x512xf32, #nisa.mem<hbm>> %o, srcs=[memref<128x512xf32, #nisa.mem<sbuf>> %a, memref<128x512xbf16, #nisa.mem<sbuf>> %b], reduce_op=add) engine=dma
    nisa.dma_compute(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, srcs=[memref<128x512xf32, #nisa.mem<hbm>> %o], reduce_op=add, scales=[1.0], unique_indices=false, oob_mode=skip) engine=dma
    nisa.nc_n_gather(dst=memref<128x16xf32, #nisa.mem<sbuf>> %g, data=memref<128x4x8xf32, #nisa.mem<sbuf>> %d, indices=memref<128x16xui32, #nisa.mem<sbuf>> %i) engine=gpsimd
    nisa.local_gather(dst=memref<128x256xbf16, #nisa.mem<sbuf>> %lg, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=4) engine=gpsimd
    nisa.local_gather(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %lg1, src_buffer=memref<128x512xbf16, #nisa.mem<sbuf>> %src, index=memref<128x4xui16, #nisa.mem<sbuf>> %idx, num_elem_per_idx=2, num_valid_indices=32) engine=gpsimd
    nisa.nc_stream_shuffle(dst=memref<64x32xf32, #nisa.mem<sbuf>> %r, src=memref<64x32xf32, #nisa.mem<psum>> %q, shuffle_mask=[1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 17, 16, 19, 18, 21, 20, 23, 22, 25, 24, 27, 26, 29, 28, 31, 255]) engine=vector
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
// GENERIC: "nisa.dma_transpose"(%t, %h) <{engine = "dma"}>
// GENERIC: "nisa.dma_transpose"(%t3, %h3) <{axes = [2 : i64, 1 : i64, 0 : i64], priority = 1 : i64, dge_mode = "unknown", oob_mode = "error", engine = "dma"}>
// GENERIC: "nisa.dma_transpose"(%t4, %h4) <{axes = [3 : i64, 1 : i64, 2 : i64, 0 : i64], engine = "dma"}>
// GENERIC: "nisa.dma_transpose"(%t16, %s16) <{dge_mode = "hwdge", engine = "dma"}>
// GENERIC: "nisa.dma_compute"(%o, %a, %b) <{reduce_op = "add", engine = "dma"}>
// GENERIC: "nisa.dma_compute"(%a, %o) <{reduce_op = "add", scales = [1.000000e+00 : f64], unique_indices = false, oob_mode = "skip", engine = "dma"}>
// GENERIC: "nisa.nc_n_gather"(%g, %d, %i) <{engine = "gpsimd"}>
// GENERIC: "nisa.local_gather"(%lg, %src, %idx) <{num_elem_per_idx = 4 : i64, engine = "gpsimd"}>
// GENERIC: "nisa.local_gather"(%lg1, %src, %idx) <{num_elem_per_idx = 2 : i64, num_valid_indices = 32 : i64, engine = "gpsimd"}>
// GENERIC: "nisa.nc_stream_shuffle"(%r, %q) <{shuffle_mask = [1 : i64, 0 : i64, 3 : i64, 2 : i64, 5 : i64, 4 : i64, 7 : i64, 6 : i64, 9 : i64, 8 : i64, 11 : i64, 10 : i64, 13 : i64, 12 : i64, 15 : i64, 14 : i64, 17 : i64, 16 : i64, 19 : i64, 18 : i64, 21 : i64, 20 : i64, 23 : i64, 22 : i64, 25 : i64, 24 : i64, 27 : i64, 26 : i64, 29 : i64, 28 : i64, 31 : i64, 255 : i64], engine = "vector"}>
