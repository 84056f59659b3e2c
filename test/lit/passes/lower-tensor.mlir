// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// nki.nc_matmul -> nisa.matmul (AWS names): accumulate None/true/false -> psum_accumulate_flags
// auto/accumulate/overwrite, is_transpose kept, perf_mode=double_row -> perf_opt=double_row,
// tile_position -> index constants row_pos/col_pos + tile_size, onezero hints dropped.
// nc_matmul_mx (TensorE) and quantize_mx (VectorE) lower 1:1.

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @lower() {
    %s = nki.ndarray() : memref<64x16xbf16, #nisa.mem<sbuf>>
    %m = nki.ndarray() : memref<64x512xbf16, #nisa.mem<sbuf>>
    %i = nki.ndarray() : memref<64x64xbf16, #nisa.mem<sbuf>>
    %p = nki.ndarray() : memref<16x512xf32, #nisa.mem<psum>>
    %pt = nki.ndarray() : memref<16x64xbf16, #nisa.mem<psum>>
    %s8 = nki.ndarray() : memref<128x2x16xf8E4M3FN, #nisa.mem<sbuf>>
    %m8 = nki.ndarray() : memref<128x2x64xf8E5M2, #nisa.mem<sbuf>>
    %p8 = nki.ndarray() : memref<16x64xf32, #nisa.mem<psum>>
    %x = nki.ndarray() : memref<32x64xbf16, #nisa.mem<sbuf>>
    %q = nki.ndarray() : memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>>
    %qs = nki.ndarray() : memref<32x16xf8E8M0FNU, #nisa.mem<sbuf>>
    %pm = nki.ndarray() : memref<16x16xf32, #nisa.mem<psum>>
    nki.nc_matmul(dst=memref<16x512xf32, #nisa.mem<psum>> %p, stationary=memref<64x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x512xbf16, #nisa.mem<sbuf>> %m, tile_position=[64, 0], tile_size=[64, 128], is_moving_onezero=true)
    nki.nc_matmul(dst=memref<16x512xf32, #nisa.mem<psum>> %p, stationary=memref<64x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x512xbf16, #nisa.mem<sbuf>> %m, accumulate=false)
    nki.nc_matmul(dst=memref<16x64xbf16, #nisa.mem<psum>> %pt, stationary=memref<64x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x64xbf16, #nisa.mem<sbuf>> %i, is_transpose=true)
    nki.nc_matmul(dst=memref<16x64xf32, #nisa.mem<psum>> %p8, stationary=memref<128x2x16xf8E4M3FN, #nisa.mem<sbuf>> %s8, moving=memref<128x2x64xf8E5M2, #nisa.mem<sbuf>> %m8, accumulate=true, perf_mode=double_row)
    nki.quantize_mx(dst=memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, src=memref<32x64xbf16, #nisa.mem<sbuf>> %x, dst_scale=memref<32x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs)
    nki.nc_matmul_mx(dst=memref<16x16xf32, #nisa.mem<psum>> %pm, stationary=memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, moving=memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, stationary_scale=memref<32x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs, moving_scale=memref<32x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs, tile_position=[32, 0], tile_size=[32, 128])
    func.return
  }
}

// CHECK:      %[[R:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT: nisa.matmul(dst=memref<16x512xf32, #nisa.mem<psum>> %p, stationary=memref<64x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x512xbf16, #nisa.mem<sbuf>> %m, row_pos=index %[[R]], col_pos=index %[[C]], is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=auto, tile_size=[64, 128]) engine=tensor
// CHECK-NEXT: nisa.matmul(dst={{.*}} %p, stationary={{.*}} %s, moving={{.*}} %m, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=overwrite) engine=tensor
// CHECK-NEXT: nisa.matmul(dst=memref<16x64xbf16, #nisa.mem<psum>> %pt, {{.*}}, is_transpose=true, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=auto) engine=tensor
// CHECK-NEXT: nisa.matmul(dst={{.*}} %p8, {{.*}}, is_transpose=false, perf_opt=double_row, psum_zero_region=size2048, psum_accumulate_flags=accumulate) engine=tensor
// CHECK-NEXT: nisa.quantize_mx(dst=memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, src=memref<32x64xbf16, #nisa.mem<sbuf>> %x, dst_scale=memref<32x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs) engine=vector
// CHECK-NEXT: nisa.nc_matmul_mx(dst=memref<16x16xf32, #nisa.mem<psum>> %pm, {{.*}}, tile_position=[32, 0], tile_size=[32, 128]) engine=tensor
// CHECK-NOT:  nki.
