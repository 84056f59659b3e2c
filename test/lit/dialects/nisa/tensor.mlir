// The tensor-engine nisa instructions: nisa.matmul in every mode (is_transpose, perf_opt=double_row,
// row tiling with row_pos/col_pos operands and tile_size, bf16 PSUM on trn3) and the trn3 MX
// instructions (dialects/isa_tensor.py) on packed x4 tiles (memref of vector<4xf8E4M3FN> /
// vector<4xf8E5M2> / vector<4xf4E2M1FN>) with f8E8M0FNU or ui8 scales; round-tripped custom ->
// custom and through the generic form.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @tensor_ops() {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %s = nisa.alloc : memref<64x32xbf16, #nisa.mem<sbuf>>
    %m = nisa.alloc : memref<64x512xbf16, #nisa.mem<sbuf>>
    %i = nisa.alloc : memref<64x64xbf16, #nisa.mem<sbuf>>
    %p = nisa.alloc : memref<32x512xf32, #nisa.mem<psum>>
    %pb = nisa.alloc : memref<32x512xbf16, #nisa.mem<psum>>
    %pt = nisa.alloc : memref<32x64xbf16, #nisa.mem<psum>>
    %s8 = nisa.alloc : memref<128x2x16xf8E4M3, #nisa.mem<sbuf>>
    %m8 = nisa.alloc : memref<128x2x64xf8E5M2, #nisa.mem<sbuf>>
    %p8 = nisa.alloc : memref<16x64xf32, #nisa.mem<psum>>
    %x = nisa.alloc : memref<64x64xbf16, #nisa.mem<sbuf>>
    %q = nisa.alloc : memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>>
    %qs = nisa.alloc : memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>>
    %w = nisa.alloc : memref<64x40xvector<4xf4E2M1FN>, #nisa.mem<sbuf>>
    %ws = nisa.alloc : memref<64x40xui8, #nisa.mem<sbuf>>
    %pm = nisa.alloc : memref<16x40xf32, #nisa.mem<psum>>
    nisa.matmul(dst=memref<32x512xf32, #nisa.mem<psum>> %p, stationary=memref<64x32xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x512xbf16, #nisa.mem<sbuf>> %m, row_pos=index %c64, col_pos=index %c0, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=auto, tile_size=[64, 128]) engine=tensor
    nisa.matmul(dst=memref<32x512xbf16, #nisa.mem<psum>> %pb, stationary=memref<64x32xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x512xbf16, #nisa.mem<sbuf>> %m, is_transpose=false, psum_accumulate_flags=accumulate) engine=tensor
    nisa.matmul(dst=memref<32x64xbf16, #nisa.mem<psum>> %pt, stationary=memref<64x32xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x64xbf16, #nisa.mem<sbuf>> %i, is_transpose=true) engine=tensor
    nisa.matmul(dst=memref<16x64xf32, #nisa.mem<psum>> %p8, stationary=memref<128x2x16xf8E4M3, #nisa.mem<sbuf>> %s8, moving=memref<128x2x64xf8E5M2, #nisa.mem<sbuf>> %m8, is_transpose=false, perf_opt=double_row) engine=tensor
    nisa.quantize_mx(dst=memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, src=memref<64x64xbf16, #nisa.mem<sbuf>> %x, dst_scale=memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs) engine=vector
    nisa.nc_matmul_mx(dst=memref<16x40xf32, #nisa.mem<psum>> %pm, stationary=memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, moving=memref<64x40xvector<4xf4E2M1FN>, #nisa.mem<sbuf>> %w, stationary_scale=memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs, moving_scale=memref<64x40xui8, #nisa.mem<sbuf>> %ws) engine=tensor
    nisa.nc_matmul_mx(dst=memref<16x40xf32, #nisa.mem<psum>> %pm, stationary=memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, moving=memref<64x40xvector<4xf4E2M1FN>, #nisa.mem<sbuf>> %w, stationary_scale=memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs, moving_scale=memref<64x40xui8, #nisa.mem<sbuf>> %ws, tile_position=[0, 0], tile_size=[64, 128], accumulate=true) engine=tensor
    func.return
  }
}

// CHECK:      nisa.matmul(dst=memref<32x512xf32, #nisa.mem<psum>> %p, stationary=memref<64x32xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x512xbf16, #nisa.mem<sbuf>> %m, row_pos=index %c64, col_pos=index %c0, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=auto, tile_size=[64, 128]) engine=tensor
// CHECK-NEXT: nisa.matmul(dst=memref<32x512xbf16, #nisa.mem<psum>> %pb, {{.*}}, is_transpose=false, psum_accumulate_flags=accumulate) engine=tensor
// CHECK-NEXT: nisa.matmul(dst=memref<32x64xbf16, #nisa.mem<psum>> %pt, stationary=memref<64x32xbf16, #nisa.mem<sbuf>> %s, moving=memref<64x64xbf16, #nisa.mem<sbuf>> %i, is_transpose=true) engine=tensor
// CHECK-NEXT: nisa.matmul(dst=memref<16x64xf32, #nisa.mem<psum>> %p8, stationary=memref<128x2x16xf8E4M3, #nisa.mem<sbuf>> %s8, moving=memref<128x2x64xf8E5M2, #nisa.mem<sbuf>> %m8, is_transpose=false, perf_opt=double_row) engine=tensor
// CHECK-NEXT: nisa.quantize_mx(dst=memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, src=memref<64x64xbf16, #nisa.mem<sbuf>> %x, dst_scale=memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs) engine=vector
// CHECK-NEXT: nisa.nc_matmul_mx(dst=memref<16x40xf32, #nisa.mem<psum>> %pm, stationary=memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, moving=memref<64x40xvector<4xf4E2M1FN>, #nisa.mem<sbuf>> %w, stationary_scale=memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>> %qs, moving_scale=memref<64x40xui8, #nisa.mem<sbuf>> %ws) engine=tensor
// CHECK-NEXT: nisa.nc_matmul_mx({{.*}}, tile_position=[0, 0], tile_size=[64, 128], accumulate=true) engine=tensor

// GENERIC:      "nisa.matmul"(%p, %s, %m, %c64, %c0) <{is_transpose = false, perf_opt = "none_", psum_zero_region = "size2048", psum_accumulate_flags = "auto", tile_size = [64 : i64, 128 : i64], engine = "tensor", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC:      "nisa.quantize_mx"(%q, %x, %qs) <{engine = "vector"}> : (memref<64x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>>, memref<64x64xbf16, #nisa.mem<sbuf>>, memref<64x16xf8E8M0FNU, #nisa.mem<sbuf>>) -> ()
// GENERIC:      "nisa.nc_matmul_mx"(%pm, %q, %w, %qs, %ws) <{engine = "tensor"}>
