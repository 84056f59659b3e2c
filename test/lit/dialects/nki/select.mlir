// The select / search / sequence instructions of the nki dialect (dialects/isa_select.py),
// optional operands, properties and engine present and absent, round-tripped
// custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

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
// CHECK: nki.select_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_false=f32 %neg)
// CHECK-NEXT: nki.select_reduce(dst=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_false=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_cmd=reduce, reduce_op=maximum, reverse_pred=true)
// CHECK-NEXT: nki.range_select(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %x, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=greater_equal, comp_op1=less)
// CHECK-NEXT: nki.range_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_true_tile=memref<128x512xf32, #nisa.mem<psum>> %ps, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=equal, comp_op1=less_equal, reduce_cmd=reset_reduce, reduce_op=maximum, range_start=128)
// CHECK-NEXT: nki.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, src=memref<128x512xbf16, #nisa.mem<sbuf>> %y)
// CHECK-NEXT: nki.nc_find_index8(dst=memref<128x8xui32, #nisa.mem<sbuf>> %i32, data=memref<128x512xbf16, #nisa.mem<sbuf>> %y, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8)
// CHECK-NEXT: nki.nc_match_replace8(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %min)
// CHECK-NEXT: nki.nc_match_replace8(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %neg, dst_idx=memref<128x8xui16, #nisa.mem<sbuf>> %i16) engine=vector
// CHECK-NEXT: nki.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8)
// CHECK-NEXT: nki.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=f32 %neg, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, reverse_pred=true)
// CHECK-NEXT: nki.sequence_bounds(dst=memref<1x2x64xi32, #nisa.mem<sbuf>> %bnd, segment_ids=memref<1x64xi32, #nisa.mem<sbuf>> %ids)
// CHECK-NEXT: nki.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x, index_offset=16, padding_val=-1)
// CHECK-NEXT: nki.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x)
// CHECK-NEXT: nki.topk(val_dst=memref<32x20xbf16, #nisa.mem<sbuf>> %tv, idx_dst=memref<32x20xui32, #nisa.mem<sbuf>> %ti, src=memref<32x16xbf16, #nisa.mem<sbuf>> %tb, n=200)

// GENERIC: "nki.select_reduce"(%x, %p8, %y, %neg) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
// GENERIC: "nki.select_reduce"(%ps, %p8, %x, %col, %col) <{reduce_cmd = "reduce", reduce_op = "maximum", reverse_pred = true, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC: "nki.range_select"(%y, %x, %col, %col, %min) <{comp_op0 = "greater_equal", comp_op1 = "less", operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1>}>
// GENERIC: "nki.range_select"(%x, %ps, %col, %col, %col, %min) <{comp_op0 = "equal", comp_op1 = "less_equal", reduce_cmd = "reset_reduce", reduce_op = "maximum", range_start = 128 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>}>
// GENERIC: "nki.max8"(%v8, %y)
// GENERIC: "nki.nc_find_index8"(%i32, %y, %v8)
// GENERIC: "nki.nc_match_replace8"(%x, %x, %v8, %min) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
// GENERIC: "nki.nc_match_replace8"(%y, %x, %v8, %neg, %i16) <{engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC: "nki.tensor_copy_predicated"(%x, %ps, %p8)
// GENERIC: "nki.tensor_copy_predicated"(%x, %neg, %p8) <{reverse_pred = true}>
// GENERIC: "nki.sequence_bounds"(%bnd, %ids)
// GENERIC: "nki.nonzero_with_count"(%nz, %x) <{index_offset = 16 : i64, padding_val = -1 : i64}>
// GENERIC: "nki.nonzero_with_count"(%nz, %x)
// GENERIC: "nki.topk"(%tv, %ti, %tb) <{n = 200 : i64}>
