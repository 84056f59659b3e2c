// Verifier negatives of the nki dialect, one per chunk (see nisa.mlir for the mechanics).
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The partition axis 0 can never be reduced.
func.func @reduce_partition_axis(%d: memref<128x1xf32, #nisa.mem<sbuf>>, %s: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nki.tensor_reduce(dst=memref<128x1xf32, #nisa.mem<sbuf>> %d, data=memref<128x512xf32, #nisa.mem<sbuf>> %s, op=add, axis=[0])
  func.return
}
// CHECK: {{^[a-z]+}}.tensor_reduce: axis=[0] is illegal for a rank-2 tensor; the reduced axes must be the trailing free axes (1..1), never the partition axis 0

// -----

// Reduced axes must be the trailing free axes.
func.func @reduce_middle_axis(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %s: memref<128x8x64xf32, #nisa.mem<sbuf>>) {
  nki.tensor_reduce(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, data=memref<128x8x64xf32, #nisa.mem<sbuf>> %s, op=add, axis=[1])
  func.return
}
// CHECK: {{^[a-z]+}}.tensor_reduce: axis=[1] is illegal for a rank-3 tensor; the reduced axes must be the trailing free axes (1..2), never the partition axis 0

// -----

// Partition dimension above 128 on an nki tensor.
func.func @ndarray_partition_dim() {
  %a = nki.ndarray() : memref<129x4xf32, #nisa.mem<psum>>
  func.return
}
// CHECK: {{^[a-z]+}}.ndarray: {{.*}} partition dimension 129, which exceeds the architecture limit of 128

// -----

// nc_matmul with a PSUM moving input.
func.func @nc_matmul_psum_moving(%d: memref<128x512xf32, #nisa.mem<psum>>, %s: memref<128x128xf32, #nisa.mem<sbuf>>, %m: memref<128x512xf32, #nisa.mem<psum>>) {
  nki.nc_matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %d, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %s, moving=memref<128x512xf32, #nisa.mem<psum>> %m)
  func.return
}
// CHECK: {{^[a-z]+}}.nc_matmul: operand 'moving' is a tensor in psum, but this instruction only accepts sbuf tensors

// -----

// Compute on HBM.
func.func @tensor_tensor_on_hbm(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %a: memref<128x512xf32, #nisa.mem<hbm>>, %b: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, data1=memref<128x512xf32, #nisa.mem<hbm>> %a, data2=memref<128x512xf32, #nisa.mem<sbuf>> %b, op=add)
  func.return
}
// CHECK: {{^[a-z]+}}.tensor_tensor: operand 'data1' is a tensor in hbm, but this instruction only accepts sbuf/psum tensors (compute engines cannot access HBM; use dma_copy)

// -----

// HBM tensors have no initial value.
func.func @zeros_in_hbm() {
  %a = nki.zeros() : memref<128x4xf32, #nisa.mem<shared_hbm>>
  func.return
}
// CHECK: {{^[a-z]+}}.zeros: HBM tensors cannot have an initial value (err_hbm_tensor_with_init_value_not_supported)

// -----

// A bad engine.
func.func @memset_on_scalar(%d: memref<128x4xf32, #nisa.mem<sbuf>>) {
  %zero = arith.constant 0.0 : f32
  nki.memset(dst=memref<128x4xf32, #nisa.mem<sbuf>> %d, value=f32 %zero) engine=scalar
  func.return
}
// CHECK: {{^[a-z]+}}.memset: cannot run on the scalar engine (allowed: vector, gpsimd)
