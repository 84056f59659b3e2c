// Verifier negatives of the data-movement ops (dialects/isa_movement.py) and of dma_copy's
// hwdge rules, one per chunk.  xDSL's --verify-diagnostics prints the message and exits 0,
// so FileCheck checks the text.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// With dge_mode=hwdge dma_transpose moves 2-byte dtypes only.
func.func @transpose_fp32(%s: memref<16x8xf32, #nisa.mem<hbm>>, %d: memref<8x16xf32, #nisa.mem<sbuf>>) {
  nisa.dma_transpose(dst=memref<8x16xf32, #nisa.mem<sbuf>> %d, src=memref<16x8xf32, #nisa.mem<hbm>> %s, dge_mode=hwdge) engine=dma
  func.return
}
// CHECK: {{^}}nisa.dma_transpose: with dge_mode=hwdge 'src' must have a 2-byte dtype (bfloat16, float16, int16, uint16), got float32

// -----

// dst must have exactly the permuted shape.
func.func @transpose_shape(%s: memref<2x3x4xbf16, #nisa.mem<hbm>>, %d: memref<4x2x3xbf16, #nisa.mem<sbuf>>) {
  nisa.dma_transpose(dst=memref<4x2x3xbf16, #nisa.mem<sbuf>> %d, src=memref<2x3x4xbf16, #nisa.mem<hbm>> %s) engine=dma
  func.return
}
// CHECK: {{^}}nisa.dma_transpose: 'dst' must have the permuted shape [4, 3, 2] (src [2, 3, 4] permuted by (2, 1, 0))

// -----

// hwdge is NeuronCore-v3 (trn2) or newer.
module attributes {nisa.target = #nisa.target<trn1>} {
  func.func @transpose_hwdge_trn1(%s: memref<16x128xbf16, #nisa.mem<hbm>>, %d: memref<128x16xbf16, #nisa.mem<sbuf>>) {
    nki.dma_transpose(dst=memref<128x16xbf16, #nisa.mem<sbuf>> %d, src=memref<16x128xbf16, #nisa.mem<hbm>> %s, dge_mode=hwdge)
    func.return
  }
}
// CHECK: {{^}}nisa.dma_transpose: dge_mode=hwdge needs trn2 (NeuronCore-v3) or newer, but the target is trn1

// -----

// dma_compute scales must all be 1.0.
func.func @compute_scales(%a: memref<4x8xf32, #nisa.mem<hbm>>, %d: memref<4x8xf32, #nisa.mem<sbuf>>) {
  nisa.dma_compute(dst=memref<4x8xf32, #nisa.mem<sbuf>> %d, srcs=[memref<4x8xf32, #nisa.mem<hbm>> %a, memref<4x8xf32, #nisa.mem<hbm>> %a], reduce_op=add, scales=[1.0, 0.5]) engine=dma
  func.return
}
// CHECK: {{^}}nisa.dma_compute: scales must all be 1.0 (the DMA engine does not scale), got [1.0, 0.5]

// -----

// dma_compute only adds.
func.func @compute_op(%a: memref<4x8xf32, #nisa.mem<hbm>>, %d: memref<4x8xf32, #nisa.mem<sbuf>>) {
  nki.dma_compute(dst=memref<4x8xf32, #nisa.mem<sbuf>> %d, srcs=[memref<4x8xf32, #nisa.mem<hbm>> %a], reduce_op=maximum)
  func.return
}
// CHECK: {{^}}nisa.dma_compute: reduce_op=maximum is not supported (expected one of: add)

// -----

// nc_n_gather indices are uint32.
func.func @gather_index_dtype(%d: memref<4x16xf32, #nisa.mem<sbuf>>, %x: memref<4x16xf32, #nisa.mem<sbuf>>, %i: memref<4x16xi32, #nisa.mem<sbuf>>) {
  nisa.nc_n_gather(dst=memref<4x16xf32, #nisa.mem<sbuf>> %d, data=memref<4x16xf32, #nisa.mem<sbuf>> %x, indices=memref<4x16xi32, #nisa.mem<sbuf>> %i) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.nc_n_gather: 'indices' must be uint32, got int32

// -----

// GpSimd cannot access PSUM.
func.func @gather_psum(%d: memref<4x16xf32, #nisa.mem<psum>>, %x: memref<4x16xf32, #nisa.mem<sbuf>>, %i: memref<4x16xui32, #nisa.mem<sbuf>>) {
  nki.nc_n_gather(dst=memref<4x16xf32, #nisa.mem<psum>> %d, data=memref<4x16xf32, #nisa.mem<sbuf>> %x, indices=memref<4x16xui32, #nisa.mem<sbuf>> %i)
  func.return
}
// CHECK: {{^}}nisa.nc_n_gather: operand 'dst' is a tensor in psum, but this instruction only accepts sbuf tensors

// -----

// local_gather copies 1, 2, 4, 8, 16 or 32 elements per index.
func.func @local_gather_elems(%d: memref<16x48xbf16, #nisa.mem<sbuf>>, %s: memref<16x64xbf16, #nisa.mem<sbuf>>, %i: memref<16x1xui16, #nisa.mem<sbuf>>) {
  nisa.local_gather(dst=memref<16x48xbf16, #nisa.mem<sbuf>> %d, src_buffer=memref<16x64xbf16, #nisa.mem<sbuf>> %s, index=memref<16x1xui16, #nisa.mem<sbuf>> %i, num_elem_per_idx=3) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.local_gather: num_elem_per_idx=3 is not supported (expected one of 1, 2, 4, 8, 16, 32)

// -----

// At most 4096 indices per GpSimd core.
func.func @local_gather_indices(%d: memref<16x4112xbf16, #nisa.mem<sbuf>>, %s: memref<16x64xbf16, #nisa.mem<sbuf>>, %i: memref<16x257xui16, #nisa.mem<sbuf>>) {
  nisa.local_gather(dst=memref<16x4112xbf16, #nisa.mem<sbuf>> %d, src_buffer=memref<16x64xbf16, #nisa.mem<sbuf>> %s, index=memref<16x257xui16, #nisa.mem<sbuf>> %i) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.local_gather: 'index' gives 4112 indices per GpSimd core, more than the limit of 4096

// -----

// The shuffle mask has one entry per partition of a 32-partition quadrant.
func.func @shuffle_mask(%d: memref<32x8xf32, #nisa.mem<sbuf>>, %s: memref<32x8xf32, #nisa.mem<sbuf>>) {
  nisa.nc_stream_shuffle(dst=memref<32x8xf32, #nisa.mem<sbuf>> %d, src=memref<32x8xf32, #nisa.mem<sbuf>> %s, shuffle_mask=[0, 1, 2]) engine=vector
  func.return
}
// CHECK: {{^}}nisa.nc_stream_shuffle: shuffle_mask has 3 entries; it must have exactly 32

// -----

// hwdge DMA does not convert dtypes.
func.func @dma_copy_hwdge_cast(%s: memref<4x8xf32, #nisa.mem<hbm>>, %d: memref<4x8xbf16, #nisa.mem<sbuf>>) {
  nki.dma_copy(dst=memref<4x8xbf16, #nisa.mem<sbuf>> %d, src=memref<4x8xf32, #nisa.mem<hbm>> %s, dge_mode=hwdge)
  func.return
}
// CHECK: {{^}}nisa.dma_copy: dge_mode=hwdge needs equal dtypes, but 'dst' is bfloat16 and 'src' is float32

// -----

// A DMA's engine picks the hwdge descriptor queue: sync or scalar only.
func.func @dma_copy_engine(%s: memref<4x8xf32, #nisa.mem<hbm>>, %d: memref<4x8xf32, #nisa.mem<sbuf>>) {
  nki.dma_copy(dst=memref<4x8xf32, #nisa.mem<sbuf>> %d, src=memref<4x8xf32, #nisa.mem<hbm>> %s, dge_mode=hwdge) engine=vector
  func.return
}
// CHECK: {{^}}nisa.dma_copy: engine=vector is not supported (a DMA's engine picks the hwdge descriptor queue: sync or scalar)
