// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// Each select / search / sequence nki op becomes its nisa twin 1:1 (same operands and
// properties); the engine is VectorE for select_reduce, range_select, max8,
// nc_find_index8, nc_match_replace8 and tensor_copy_predicated, GpSimd for
// sequence_bounds, nonzero_with_count and topk.

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @select_ops() {
    %neg = arith.constant -1.0 : f32
    %min = arith.constant -3.40282347E+38 : f32
    %x = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
    %y = nki.ndarray() : memref<128x512xbf16, #nisa.mem<sbuf>>
    %p8 = nki.ndarray() : memref<128x512xui8, #nisa.mem<sbuf>>
    %col = nki.ndarray() : memref<128x1xf32, #nisa.mem<sbuf>>
    %ps = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
    %v8 = nki.ndarray() : memref<128x8xf32, #nisa.mem<sbuf>>
    %i32 = nki.ndarray() : memref<128x8xui32, #nisa.mem<sbuf>>
    %i16 = nki.ndarray() : memref<128x8xui16, #nisa.mem<sbuf>>
    %ids = nki.ndarray() : memref<1x64xi32, #nisa.mem<sbuf>>
    %bnd = nki.ndarray() : memref<1x2x64xi32, #nisa.mem<sbuf>>
    %nz = nki.ndarray() : memref<128x513xi32, #nisa.mem<sbuf>>
    %tb = nki.ndarray() : memref<32x16xbf16, #nisa.mem<sbuf>>
    %tv = nki.ndarray() : memref<32x20xbf16, #nisa.mem<sbuf>>
    %ti = nki.ndarray() : memref<32x20xui32, #nisa.mem<sbuf>>
    nki.select_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_false=f32 %neg)
    nki.select_reduce(dst=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_false=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_cmd=reduce, reduce_op=maximum, reverse_pred=true)
    nki.range_select(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %x, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=greater_equal, comp_op1=less)
    nki.range_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_true_tile=memref<128x512xf32, #nisa.mem<psum>> %ps, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=equal, comp_op1=less_equal, reduce_cmd=reset_reduce, reduce_op=maximum, range_start=128)
    nki.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, src=memref<128x512xbf16, #nisa.mem<sbuf>> %y)
    nki.nc_find_index8(dst=memref<128x8xui32, #nisa.mem<sbuf>> %i32, data=memref<128x512xbf16, #nisa.mem<sbuf>> %y, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8)
    nki.nc_match_replace8(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %min)
    nki.nc_match_replace8(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %neg, dst_idx=memref<128x8xui16, #nisa.mem<sbuf>> %i16) engine=vector
    nki.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8)
    nki.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=f32 %neg, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, reverse_pred=true)
    nki.sequence_bounds(dst=memref<1x2x64xi32, #nisa.mem<sbuf>> %bnd, segment_ids=memref<1x64xi32, #nisa.mem<sbuf>> %ids)
    nki.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x, index_offset=16, padding_val=-1)
    nki.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x)
    nki.topk(val_dst=memref<32x20xbf16, #nisa.mem<sbuf>> %tv, idx_dst=memref<32x20xui32, #nisa.mem<sbuf>> %ti, src=memref<32x16xbf16, #nisa.mem<sbuf>> %tb, n=200)
    func.return
  }
}

// CHECK-LABEL: func.func @select_ops() {
// CHECK-NOT: nki.
// CHECK: nisa.select_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_false=f32 %neg) engine=vector
// CHECK: nisa.select_reduce(dst=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_false=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_cmd=reduce, reduce_op=maximum, reverse_pred=true) engine=vector
// CHECK: nisa.range_select(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %x, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=greater_equal, comp_op1=less) engine=vector
// CHECK: nisa.range_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_true_tile=memref<128x512xf32, #nisa.mem<psum>> %ps, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=equal, comp_op1=less_equal, reduce_cmd=reset_reduce, reduce_op=maximum, range_start=128) engine=vector
// CHECK: nisa.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, src=memref<128x512xbf16, #nisa.mem<sbuf>> %y) engine=vector
// CHECK: nisa.nc_find_index8(dst=memref<128x8xui32, #nisa.mem<sbuf>> %i32, data=memref<128x512xbf16, #nisa.mem<sbuf>> %y, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8) engine=vector
// CHECK: nisa.nc_match_replace8(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %min) engine=vector
// CHECK: nisa.nc_match_replace8(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %neg, dst_idx=memref<128x8xui16, #nisa.mem<sbuf>> %i16) engine=vector
// CHECK: nisa.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8) engine=vector
// CHECK: nisa.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=f32 %neg, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, reverse_pred=true) engine=vector
// CHECK: nisa.sequence_bounds(dst=memref<1x2x64xi32, #nisa.mem<sbuf>> %bnd, segment_ids=memref<1x64xi32, #nisa.mem<sbuf>> %ids) engine=gpsimd
// CHECK: nisa.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x, index_offset=16, padding_val=-1) engine=gpsimd
// CHECK: nisa.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x) engine=gpsimd
// CHECK: nisa.topk(val_dst=memref<32x20xbf16, #nisa.mem<sbuf>> %tv, idx_dst=memref<32x20xui32, #nisa.mem<sbuf>> %ti, src=memref<32x16xbf16, #nisa.mem<sbuf>> %tb, n=200) engine=gpsimd
