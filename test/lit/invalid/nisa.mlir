// Verifier negatives of the nisa dialect, one per chunk.  xDSL's --verify-diagnostics
// prints the message (and the annotated IR) and exits 0, so FileCheck checks the text.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Partition dimension above 128 (nl.tile_size.pmax) on an alloc.
func.func @alloc_partition_dim() {
  %a = nisa.alloc : memref<256x512xf32, #nisa.mem<sbuf>>
  func.return
}
// CHECK: {{^}}nisa.alloc: {{.*}} partition dimension 256, which exceeds the architecture limit of 128

// -----

// ... and on an instruction operand.
func.func @operand_partition_dim(%a: memref<256x4xf32, #nisa.mem<sbuf>>, %b: memref<256x4xf32, #nisa.mem<sbuf>>) {
  nisa.reciprocal(dst=memref<256x4xf32, #nisa.mem<sbuf>> %a, src=memref<256x4xf32, #nisa.mem<sbuf>> %b) engine=vector
  func.return
}
// CHECK: {{^}}nisa.reciprocal: operand 'dst' has partition dimension 256, which exceeds the architecture limit of 128

// -----

// matmul reads its stationary and moving inputs from SBUF only.
func.func @matmul_psum_stationary(%d: memref<128x512xf32, #nisa.mem<psum>>, %s: memref<128x128xf32, #nisa.mem<psum>>, %m: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %d, stationary=memref<128x128xf32, #nisa.mem<psum>> %s, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: operand 'stationary' is a tensor in psum, but this instruction only accepts sbuf tensors

// -----

func.func @matmul_psum_moving(%d: memref<128x512xf32, #nisa.mem<psum>>, %s: memref<128x128xf32, #nisa.mem<sbuf>>, %m: memref<128x512xf32, #nisa.mem<psum>>) {
  nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %d, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %s, moving=memref<128x512xf32, #nisa.mem<psum>> %m, is_transpose=false) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: operand 'moving' is a tensor in psum, but this instruction only accepts sbuf tensors

// -----

// The moving free size is at most one PSUM bank of fp32 (512) on trn2.
func.func @matmul_moving_fmax(%d: memref<128x1024xf32, #nisa.mem<psum>>, %s: memref<128x128xf32, #nisa.mem<sbuf>>, %m: memref<128x1024xf32, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<128x1024xf32, #nisa.mem<psum>> %d, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %s, moving=memref<128x1024xf32, #nisa.mem<sbuf>> %m, is_transpose=false) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: moving free size 1024 exceeds the limit of 512 (gemm_moving_fmax on trn2: one PSUM bank of fp32)

// -----

func.func @matmul_dst_sbuf(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %s: memref<128x128xf32, #nisa.mem<sbuf>>, %m: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %s, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false) engine=tensor
  func.return
}
// CHECK: {{^}}nisa.matmul: operand 'dst' is a tensor in sbuf, but this instruction only accepts psum tensors

// -----

// Compute engines cannot access HBM.
func.func @compute_on_hbm(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %h: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
  nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %h) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_copy: operand 'src' is a tensor in shared_hbm, but this instruction only accepts sbuf/psum tensors (compute engines cannot access HBM; use dma_copy)

// -----

// DMA cannot read or write PSUM (NKI 0.3+).
func.func @dma_from_psum(%h: memref<128x512xf32, #nisa.mem<hbm>>, %p: memref<128x512xf32, #nisa.mem<psum>>) {
  nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<hbm>> %h, src=memref<128x512xf32, #nisa.mem<psum>> %p) engine=dma
  func.return
}
// CHECK: {{^}}nisa.dma_copy: operand 'src' is in PSUM; DMA cannot access PSUM (copy it to SBUF with tensor_copy first)

// -----

func.func @dma_to_psum(%p: memref<128x512xf32, #nisa.mem<psum>>, %h: memref<128x512xf32, #nisa.mem<hbm>>) {
  nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<psum>> %p, src=memref<128x512xf32, #nisa.mem<hbm>> %h) engine=dma
  func.return
}
// CHECK: {{^}}nisa.dma_copy: operand 'dst' is in PSUM; DMA cannot access PSUM (copy it to SBUF with tensor_copy first)

// -----

// At most one input of tensor_tensor_arith may be in PSUM.
func.func @both_inputs_psum(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %a: memref<128x512xf32, #nisa.mem<psum>>, %b: memref<128x512xf32, #nisa.mem<psum>>) {
  nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, lhs=memref<128x512xf32, #nisa.mem<psum>> %a, rhs=memref<128x512xf32, #nisa.mem<psum>> %b, op=add) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_tensor_arith: inputs 'lhs' and 'rhs' are both in PSUM; at most one input may be in PSUM

// -----

// Element counts must agree.
func.func @dma_element_count(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %h: memref<128x256xf32, #nisa.mem<hbm>>) {
  nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, src=memref<128x256xf32, #nisa.mem<hbm>> %h) engine=dma
  func.return
}
// CHECK: {{^}}nisa.dma_copy: dst has 65536 elements but src has 32768 (dst is [128, 512] float32 in sbuf, src is [128, 256] float32 in hbm)

// -----

func.func @copy_element_count(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %s: memref<128x4x64xf32, #nisa.mem<sbuf>>) {
  nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, src=memref<128x4x64xf32, #nisa.mem<sbuf>> %s) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_copy: per-partition element counts differ: 'dst' is [128, 512] float32 in sbuf, 'src' is [128, 4, 64] float32 in sbuf

// -----

// tensor_reduce_arith reduces 1..(rank-1) innermost free dims.
func.func @reduce_num_r_dim(%d: memref<128x1xf32, #nisa.mem<sbuf>>, %s: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nisa.tensor_reduce_arith(dst=memref<128x1xf32, #nisa.mem<sbuf>> %d, src=memref<128x512xf32, #nisa.mem<sbuf>> %s, op=add, negated=false, num_r_dim=2) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_reduce_arith: num_r_dim=2 must be between 1 and the number of free dims (1)

// -----

// Engines: an unknown engine name, and an engine that cannot run the instruction.
func.func @unknown_engine(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %s: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nisa.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, src=memref<128x512xf32, #nisa.mem<sbuf>> %s) engine=warp
  func.return
}
// CHECK: {{^}}nisa.reciprocal: unknown engine 'warp' (expected one of unknown, tensor, vector, scalar, gpsimd, dma, sync)

// -----

func.func @wrong_engine(%d: memref<128x512xf32, #nisa.mem<sbuf>>, %s: memref<128x512xf32, #nisa.mem<sbuf>>) {
  %one = arith.constant 1.0 : f32
  nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %d, src=memref<128x512xf32, #nisa.mem<sbuf>> %s, bias=f32 %one, scale=f32 %one, op=exp) engine=vector
  func.return
}
// CHECK: {{^}}nisa.activation: cannot run on the vector engine (allowed: scalar)

// -----

func.func @matmul_on_vector(%d: memref<128x512xf32, #nisa.mem<psum>>, %s: memref<128x128xf32, #nisa.mem<sbuf>>, %m: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %d, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %s, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false) engine=vector
  func.return
}
// CHECK: {{^}}nisa.matmul: cannot run on the vector engine (allowed: tensor)
