// Verifier negatives of the tensor engine (rules.matmul, dialects/isa_tensor.py), one per chunk.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// trn2: the PSUM dst of a matmul must be float32 (bf16 PSUM needs trn3).
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @bf16_psum_trn2(%d: memref<64x8xbf16, #nisa.mem<psum>>, %s: memref<128x64xbf16, #nisa.mem<sbuf>>, %m: memref<128x8xbf16, #nisa.mem<sbuf>>) {
    nisa.matmul(dst=memref<64x8xbf16, #nisa.mem<psum>> %d, stationary=memref<128x64xbf16, #nisa.mem<sbuf>> %s, moving=memref<128x8xbf16, #nisa.mem<sbuf>> %m, is_transpose=false) engine=tensor
    func.return
  }
}
// CHECK: {{^}}nisa.matmul: PSUM dst must be float32 on trn2, got bfloat16

// -----

// trn3: the moving free size may reach 4096 with a float32 dst, not more.
module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @moving_fmax_trn3(%d: memref<8x4100xf32, #nisa.mem<psum>>, %s: memref<128x8xbf16, #nisa.mem<sbuf>>, %m: memref<128x4100xbf16, #nisa.mem<sbuf>>) {
    nki.nc_matmul(dst=memref<8x4100xf32, #nisa.mem<psum>> %d, stationary=memref<128x8xbf16, #nisa.mem<sbuf>> %s, moving=memref<128x4100xbf16, #nisa.mem<sbuf>> %m)
    func.return
  }
}
// CHECK: {{^}}nisa.nc_matmul: moving free size 4100 exceeds the limit of 4096 (gemm_moving_fmax on trn3: 8 PSUM banks of float32)

// -----

// fp32 pairs only with fp32/tf32.
func.func @fp32_pairing(%d: memref<64x8xf32, #nisa.mem<psum>>, %s: memref<128x64xf32, #nisa.mem<sbuf>>, %m: memref<128x8xbf16, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<64x8xf32, #nisa.mem<psum>> %d, stationary=memref<128x64xf32, #nisa.mem<sbuf>> %s, moving=memref<128x8xbf16, #nisa.mem<sbuf>> %m, is_transpose=false) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: fp32/tf32 inputs must pair with fp32/tf32 (stationary is float32, moving is bfloat16)

// -----

// double_row needs fp8 inputs.
func.func @double_row_bf16(%d: memref<8x8xf32, #nisa.mem<psum>>, %s: memref<128x2x8xbf16, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<8x8xf32, #nisa.mem<psum>> %d, stationary=memref<128x2x8xbf16, #nisa.mem<sbuf>> %s, moving=memref<128x2x8xbf16, #nisa.mem<sbuf>> %s, is_transpose=false, perf_opt=double_row) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: perf_mode=double_row needs fp8 inputs (float8_e4m3, float8_e5m2), but 'stationary' is bfloat16

// -----

// Row tiling: the row_pos operand must be a multiple of the row tile size.
func.func @row_pos(%d: memref<8x8xf32, #nisa.mem<psum>>, %s: memref<32x8xbf16, #nisa.mem<sbuf>>) {
  %r = arith.constant 16 : index
  %c = arith.constant 0 : index
  nisa.matmul(dst=memref<8x8xf32, #nisa.mem<psum>> %d, stationary=memref<32x8xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x8xbf16, #nisa.mem<sbuf>> %s, row_pos=index %r, col_pos=index %c, is_transpose=false, tile_size=[32, 128]) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: tile_position row 16 is not a valid start for a 32-row tile (allowed: 0, 32, 64, 96; a multiple of the row size below 128)

// -----

// A column tile holds at most tile_size[1] stationary columns (the output partitions).
func.func @col_tiling(%d: memref<80x8xf32, #nisa.mem<psum>>, %s: memref<32x80xbf16, #nisa.mem<sbuf>>, %m: memref<32x8xbf16, #nisa.mem<sbuf>>) {
  nki.nc_matmul(dst=memref<80x8xf32, #nisa.mem<psum>> %d, stationary=memref<32x80xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x8xbf16, #nisa.mem<sbuf>> %m, tile_position=[0, 64], tile_size=[64, 64])
  func.return
}
// CHECK: {{^}}nisa.nc_matmul: stationary free size 80 exceeds the column tile size 64 (tile_size[1])

// -----

// is_transpose keeps the stationary dtype.
func.func @transpose_dtype(%d: memref<16x32xf32, #nisa.mem<psum>>, %s: memref<32x16xbf16, #nisa.mem<sbuf>>, %i: memref<32x32xbf16, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<16x32xf32, #nisa.mem<psum>> %d, stationary=memref<32x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x32xbf16, #nisa.mem<sbuf>> %i, is_transpose=true) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: with is_transpose, dst dtype must be the stationary dtype bfloat16, got float32

// -----

// nc_matmul_mx is trn3 only.
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @mx_trn2(%d: memref<16x16xf32, #nisa.mem<psum>>, %q: memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>>, %c: memref<4x16xui8, #nisa.mem<sbuf>>) {
    nisa.nc_matmul_mx(dst=memref<16x16xf32, #nisa.mem<psum>> %d, stationary=memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, moving=memref<32x16xvector<4xf8E4M3FN>, #nisa.mem<sbuf>> %q, stationary_scale=memref<4x16xui8, #nisa.mem<sbuf>> %c, moving_scale=memref<4x16xui8, #nisa.mem<sbuf>> %c) engine=tensor
    func.return
  }
}
// CHECK: {{^}}nisa.nc_matmul_mx: nc_matmul_mx (MXFP8/MXFP4 matmul) needs trn3 (NeuronCore-v4) or newer, but the target is trn2

// -----

// quantize_mx needs a partition count that is a multiple of 32.
module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @quantize_partitions(%q: memref<16x2xvector<4xf8E5M2>, #nisa.mem<sbuf>>, %x: memref<16x8xbf16, #nisa.mem<sbuf>>, %c: memref<16x2xui8, #nisa.mem<sbuf>>) {
    nisa.quantize_mx(dst=memref<16x2xvector<4xf8E5M2>, #nisa.mem<sbuf>> %q, src=memref<16x8xbf16, #nisa.mem<sbuf>> %x, dst_scale=memref<16x2xui8, #nisa.mem<sbuf>> %c) engine=vector
    func.return
  }
}
// CHECK: {{^}}nisa.quantize_mx: 'src' has 16 partitions; MX data needs a multiple of 32 partitions (at most 128)
