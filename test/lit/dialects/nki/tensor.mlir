// The tensor-engine nki instructions: nki.nc_matmul with every optional property (accumulate,
// is_transpose, tile_position/tile_size, perf_mode, the onezero hints) and the trn3 MX
// instructions nki.quantize_mx / nki.nc_matmul_mx on packed x4 tiles; round-tripped custom ->
// custom and through the generic form.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @tensor_ops() {
    %s = nki.ndarray() : memref<32x16xbf16, #nisa.mem<sbuf>>
    %m = nki.ndarray() : memref<32x8192xbf16, #nisa.mem<sbuf>>
    %i = nki.ndarray() : memref<32x32xbf16, #nisa.mem<sbuf>>
    %p = nki.ndarray() : memref<16x8192xbf16, #nisa.mem<psum>>
    %pt = nki.ndarray() : memref<16x32xbf16, #nisa.mem<psum>>
    %s8 = nki.ndarray() : memref<128x2x16xf8E4M3FN, #nisa.mem<sbuf>>
    %m8 = nki.ndarray() : memref<128x2x64xf8E5M2, #nisa.mem<sbuf>>
    %p8 = nki.ndarray() : memref<16x64xf32, #nisa.mem<psum>>
    %x = nki.ndarray() : memref<32x64xf16, #nisa.mem<sbuf>>
    %q = nki.ndarray() : memref<32x16xvector<4xf8E5M2>, #nisa.mem<sbuf>>
    %qs = nki.ndarray() : memref<4x16xui8, #nisa.mem<sbuf>>
    %pm = nki.ndarray() : memref<16x16xbf16, #nisa.mem<psum>>
    nki.nc_matmul(dst=memref<16x8192xbf16, #nisa.mem<psum>> %p, stationary=memref<32x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x8192xbf16, #nisa.mem<sbuf>> %m)
    nki.nc_matmul(dst=memref<16x8192xbf16, #nisa.mem<psum>> %p, stationary=memref<32x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x8192xbf16, #nisa.mem<sbuf>> %m, accumulate=true, tile_position=[96, 0], tile_size=[32, 128], is_stationary_onezero=true)
    nki.nc_matmul(dst=memref<16x32xbf16, #nisa.mem<psum>> %pt, stationary=memref<32x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x32xbf16, #nisa.mem<sbuf>> %i, is_transpose=true, is_moving_onezero=true)
    nki.nc_matmul(dst=memref<16x64xf32, #nisa.mem<psum>> %p8, stationary=memref<128x2x16xf8E4M3FN, #nisa.mem<sbuf>> %s8, moving=memref<128x2x64xf8E5M2, #nisa.mem<sbuf>> %m8, accumulate=false, perf_mode=double_row)
    nki.quantize_mx(dst=memref<32x16xvector<4xf8E5M2>, #nisa.mem<sbuf>> %q, src=memref<32x64xf16, #nisa.mem<sbuf>> %x, dst_scale=memref<4x16xui8, #nisa.mem<sbuf>> %qs)
    nki.nc_matmul_mx(dst=memref<16x16xbf16, #nisa.mem<psum>> %pm, stationary=memref<32x16xvector<4xf8E5M2>, #nisa.mem<sbuf>> %q, moving=memref<32x16xvector<4xf8E5M2>, #nisa.mem<sbuf>> %q, stationary_scale=memref<4x16xui8, #nisa.mem<sbuf>> %qs, moving_scale=memref<4x16xui8, #nisa.mem<sbuf>> %qs, accumulate=false)
    func.return
  }
}

// CHECK:      nki.nc_matmul(dst=memref<16x8192xbf16, #nisa.mem<psum>> %p, stationary=memref<32x16xbf16, #nisa.mem<sbuf>> %s, moving=memref<32x8192xbf16, #nisa.mem<sbuf>> %m)
// CHECK-NEXT: nki.nc_matmul({{.*}}, accumulate=true, tile_position=[96, 0], tile_size=[32, 128], is_stationary_onezero=true)
// CHECK-NEXT: nki.nc_matmul(dst=memref<16x32xbf16, #nisa.mem<psum>> %pt, {{.*}}, is_transpose=true, is_moving_onezero=true)
// CHECK-NEXT: nki.nc_matmul({{.*}} %m8, accumulate=false, perf_mode=double_row)
// CHECK-NEXT: nki.quantize_mx(dst=memref<32x16xvector<4xf8E5M2>, #nisa.mem<sbuf>> %q, src=memref<32x64xf16, #nisa.mem<sbuf>> %x, dst_scale=memref<4x16xui8, #nisa.mem<sbuf>> %qs)
// CHECK-NEXT: nki.nc_matmul_mx(dst=memref<16x16xbf16, #nisa.mem<psum>> %pm, stationary={{.*}} %q, moving={{.*}} %q, stationary_scale={{.*}} %qs, moving_scale={{.*}} %qs, accumulate=false)

// GENERIC:      "nki.nc_matmul"(%p, %s, %m) <{accumulate = true, tile_position = [96 : i64, 0 : i64], tile_size = [32 : i64, 128 : i64], is_stationary_onezero = true}>
// GENERIC:      "nki.nc_matmul"(%p8, %s8, %m8) <{accumulate = false, perf_mode = "double_row"}>
// GENERIC:      "nki.nc_matmul_mx"(%pm, %q, %q, %qs, %qs) <{accumulate = false}>
