// Verifier negatives of the select / search / sequence instructions, one per chunk.
// xDSL's --verify-diagnostics prints the message and exits 0, so FileCheck checks the text.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// range_select is NeuronCore-v3+ only.
module attributes {nisa.target = #nisa.target<trn1>} {
  func.func @range_select_trn1(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %b: memref<128x1xf32, #nisa.mem<sbuf>>) {
    %min = arith.constant -3.40282347E+38 : f32
    nisa.range_select(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, on_true_tile=memref<128x64xf32, #nisa.mem<sbuf>> %d, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %b, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %b, on_false_value=f32 %min, comp_op0=less, comp_op1=less) engine=vector
    func.return
  }
}
// CHECK: {{^}}nisa.range_select: range_select needs trn2 (NeuronCore-v3) or newer, but the target is trn1

// -----

// range_select only fills with FP32_MIN.
func.func @range_select_fill(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %b: memref<128x1xf32, #nisa.mem<sbuf>>) {
  %zero = arith.constant 0.0 : f32
  nki.range_select(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, on_true_tile=memref<128x64xf32, #nisa.mem<sbuf>> %d, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %b, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %b, on_false_value=f32 %zero, comp_op0=less, comp_op1=less)
  func.return
}
// CHECK: {{^}}nisa.range_select: on_false_value=0.0 is not supported; the hardware only fills with FP32_MIN

// -----

// nonzero_with_count is NeuronCore-v3+ only.
module attributes {nisa.target = #nisa.target<trn1>} {
  func.func @nonzero_trn1(%d: memref<128x65xi32, #nisa.mem<sbuf>>, %s: memref<128x64xf32, #nisa.mem<sbuf>>) {
    nisa.nonzero_with_count(dst=memref<128x65xi32, #nisa.mem<sbuf>> %d, src=memref<128x64xf32, #nisa.mem<sbuf>> %s) engine=gpsimd
    func.return
  }
}
// CHECK: {{^}}nisa.nonzero_with_count: nonzero_with_count needs trn2 (NeuronCore-v3) or newer, but the target is trn1

// -----

// max8 reads 8..16384 elements per partition.
func.func @max8_too_small(%d: memref<128x8xf32, #nisa.mem<sbuf>>, %s: memref<128x4xf32, #nisa.mem<sbuf>>) {
  nisa.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %d, src=memref<128x4xf32, #nisa.mem<sbuf>> %s) engine=vector
  func.return
}
// CHECK: {{^}}nisa.max8: 'src' has 4 elements per partition, but nisa.max8 needs 8..16384

// -----

// nc_find_index8 writes uint16 or uint32 indices.
func.func @find_index8_dtype(%d: memref<128x8xi32, #nisa.mem<sbuf>>, %s: memref<128x64xf32, #nisa.mem<sbuf>>, %v: memref<128x8xf32, #nisa.mem<sbuf>>) {
  nisa.nc_find_index8(dst=memref<128x8xi32, #nisa.mem<sbuf>> %d, data=memref<128x64xf32, #nisa.mem<sbuf>> %s, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v) engine=vector
  func.return
}
// CHECK: {{^}}nisa.nc_find_index8: 'dst' has dtype int32, but it must be uint16 or uint32

// -----

// select_reduce predicates are 8- or 16-bit integers.
func.func @select_reduce_predicate(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %p: memref<128x64xui32, #nisa.mem<sbuf>>) {
  %zero = arith.constant 0.0 : f32
  nisa.select_reduce(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, predicate=memref<128x64xui32, #nisa.mem<sbuf>> %p, on_true=memref<128x64xf32, #nisa.mem<sbuf>> %d, on_false=f32 %zero) engine=vector
  func.return
}
// CHECK: {{^}}nisa.select_reduce: 'predicate' has dtype uint32, but it must be int8, uint8, int16 or uint16

// -----

// tensor_copy_predicated copies without a cast.
func.func @copy_predicated_dtype(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %s: memref<128x64xbf16, #nisa.mem<sbuf>>, %p: memref<128x64xui8, #nisa.mem<sbuf>>) {
  nisa.tensor_copy_predicated(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, src=memref<128x64xbf16, #nisa.mem<sbuf>> %s, predicate=memref<128x64xui8, #nisa.mem<sbuf>> %p) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_copy_predicated: 'src' dtype bfloat16 differs from 'dst' dtype float32

// -----

// sequence_bounds works on one partition.
func.func @sequence_bounds_partitions(%d: memref<2x2x16xf32, #nisa.mem<sbuf>>, %s: memref<2x16xf32, #nisa.mem<sbuf>>) {
  nisa.sequence_bounds(dst=memref<2x2x16xf32, #nisa.mem<sbuf>> %d, segment_ids=memref<2x16xf32, #nisa.mem<sbuf>> %s) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.sequence_bounds: 'dst' has partition dimension 2, but sequence_bounds needs exactly 1

// -----

// topk works on 16-partition groups.
func.func @topk_partitions(%v: memref<24x8xbf16, #nisa.mem<sbuf>>, %i: memref<24x8xui32, #nisa.mem<sbuf>>, %s: memref<24x16xbf16, #nisa.mem<sbuf>>) {
  nisa.topk(val_dst=memref<24x8xbf16, #nisa.mem<sbuf>> %v, idx_dst=memref<24x8xui32, #nisa.mem<sbuf>> %i, src=memref<24x16xbf16, #nisa.mem<sbuf>> %s, n=64) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.topk: 'src' has 24 partitions; topk works on 16-partition groups

// -----

// the GpSimd instructions cannot run on VectorE.
func.func @topk_engine(%v: memref<16x8xbf16, #nisa.mem<sbuf>>, %i: memref<16x8xui32, #nisa.mem<sbuf>>, %s: memref<16x16xbf16, #nisa.mem<sbuf>>) {
  nisa.topk(val_dst=memref<16x8xbf16, #nisa.mem<sbuf>> %v, idx_dst=memref<16x8xui32, #nisa.mem<sbuf>> %i, src=memref<16x16xbf16, #nisa.mem<sbuf>> %s, n=64) engine=vector
  func.return
}
// CHECK: {{^}}nisa.topk: cannot run on the vector engine (allowed: gpsimd)
