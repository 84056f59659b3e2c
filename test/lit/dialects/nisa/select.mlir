// The select / search / sequence instructions of the nisa dialect (dialects/isa_select.py),
// optional operands and properties present and absent, round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @select_ops() {
    %neg = arith.constant -1.0 : f32
    %min = arith.constant -3.40282347E+38 : f32
    %x = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    %y = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
    %p8 = nisa.alloc : memref<128x512xui8, #nisa.mem<sbuf>>
    %col = nisa.alloc : memref<128x1xf32, #nisa.mem<sbuf>>
    %ps = nisa.alloc : memref<128x512xf32, #nisa.mem<psum>>
    %v8 = nisa.alloc : memref<128x8xf32, #nisa.mem<sbuf>>
    %i32 = nisa.alloc : memref<128x8xui32, #nisa.mem<sbuf>>
    %i16 = nisa.alloc : memref<128x8xui16, #nisa.mem<sbuf>>
    %ids = nisa.alloc : memref<1x64xi32, #nisa.mem<sbuf>>
    %bnd = nisa.alloc : memref<1x2x64xi32, #nisa.mem<sbuf>>
    %nz = nisa.alloc : memref<128x513xi32, #nisa.mem<sbuf>>
    %tb = nisa.alloc : memref<32x16xbf16, #nisa.mem<sbuf>>
    %tv = nisa.alloc : memref<32x20xbf16, #nisa.mem<sbuf>>
    %ti = nisa.alloc : memref<32x20xui32, #nisa.mem<sbuf>>
    nisa.select_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_false=f32 %neg) engine=vector
    nisa.select_reduce(dst=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_false=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_cmd=reduce, reduce_op=maximum, reverse_pred=true) engine=vector
    nisa.range_select(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %x, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=greater_equal, comp_op1=less) engine=vector
    nisa.range_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_true_tile=memref<128x512xf32, #nisa.mem<psum>> %ps, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=equal, comp_op1=less_equal, reduce_cmd=reset_reduce, reduce_op=maximum, range_start=128) engine=vector
    nisa.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, src=memref<128x512xbf16, #nisa.mem<sbuf>> %y) engine=vector
    nisa.nc_find_index8(dst=memref<128x8xui32, #nisa.mem<sbuf>> %i32, data=memref<128x512xbf16, #nisa.mem<sbuf>> %y, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8) engine=vector
    nisa.nc_match_replace8(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %min) engine=vector
    nisa.nc_match_replace8(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %neg, dst_idx=memref<128x8xui16, #nisa.mem<sbuf>> %i16) engine=vector
    nisa.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8) engine=vector
    nisa.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=f32 %neg, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, reverse_pred=true) engine=vector
    nisa.sequence_bounds(dst=memref<1x2x64xi32, #nisa.mem<sbuf>> %bnd, segment_ids=memref<1x64xi32, #nisa.mem<sbuf>> %ids) engine=gpsimd
    nisa.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x, index_offset=16, padding_val=-1) engine=gpsimd
    nisa.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x) engine=gpsimd
    nisa.topk(val_dst=memref<32x20xbf16, #nisa.mem<sbuf>> %tv, idx_dst=memref<32x20xui32, #nisa.mem<sbuf>> %ti, src=memref<32x16xbf16, #nisa.mem<sbuf>> %tb, n=200) engine=gpsimd
    func.return
  }
}

// CHECK-LABEL: func.func @select_ops() {
// CHECK: nisa.select_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_false=f32 %neg) engine=vector
// CHECK-NEXT: nisa.select_reduce(dst=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, on_true=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_false=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_cmd=reduce, reduce_op=maximum, reverse_pred=true) engine=vector
// CHECK-NEXT: nisa.range_select(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %x, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=greater_equal, comp_op1=less) engine=vector
// CHECK-NEXT: nisa.range_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, on_true_tile=memref<128x512xf32, #nisa.mem<psum>> %ps, bound0=memref<128x1xf32, #nisa.mem<sbuf>> %col, bound1=memref<128x1xf32, #nisa.mem<sbuf>> %col, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %col, on_false_value=f32 %min, comp_op0=equal, comp_op1=less_equal, reduce_cmd=reset_reduce, reduce_op=maximum, range_start=128) engine=vector
// CHECK-NEXT: nisa.max8(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, src=memref<128x512xbf16, #nisa.mem<sbuf>> %y) engine=vector
// CHECK-NEXT: nisa.nc_find_index8(dst=memref<128x8xui32, #nisa.mem<sbuf>> %i32, data=memref<128x512xbf16, #nisa.mem<sbuf>> %y, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8) engine=vector
// CHECK-NEXT: nisa.nc_match_replace8(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %min) engine=vector
// CHECK-NEXT: nisa.nc_match_replace8(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, vals=memref<128x8xf32, #nisa.mem<sbuf>> %v8, imm=f32 %neg, dst_idx=memref<128x8xui16, #nisa.mem<sbuf>> %i16) engine=vector
// CHECK-NEXT: nisa.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<psum>> %ps, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8) engine=vector
// CHECK-NEXT: nisa.tensor_copy_predicated(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=f32 %neg, predicate=memref<128x512xui8, #nisa.mem<sbuf>> %p8, reverse_pred=true) engine=vector
// CHECK-NEXT: nisa.sequence_bounds(dst=memref<1x2x64xi32, #nisa.mem<sbuf>> %bnd, segment_ids=memref<1x64xi32, #nisa.mem<sbuf>> %ids) engine=gpsimd
// CHECK-NEXT: nisa.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x, index_offset=16, padding_val=-1) engine=gpsimd
// CHECK-NEXT: nisa.nonzero_with_count(dst=memref<128x513xi32, #nisa.mem<sbuf>> %nz, src=memref<128x512xf32, #nisa.mem<sbuf>> %x) engine=gpsimd
// CHECK-NEXT: nisa.topk(val_dst=memref<32x20xbf16, #nisa.mem<sbuf>> %tv, idx_dst=memref<32x20xui32, #nisa.mem<sbuf>> %ti, src=memref<32x16xbf16, #nisa.mem<sbuf>> %tb, n=200) engine=gpsimd

// GENERIC: "nisa.select_reduce"(%x, %p8, %y, %neg) <{engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
// GENERIC: "nisa.select_reduce"(%ps, %p8, %x, %col, %col) <{reduce_cmd = "reduce", reduce_op = "maximum", reverse_pred = true, engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC: "nisa.range_select"(%y, %x, %col, %col, %min) <{comp_op0 = "greater_equal", comp_op1 = "less", engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1>}>
// GENERIC: "nisa.range_select"(%x, %ps, %col, %col, %col, %min) <{comp_op0 = "equal", comp_op1 = "less_equal", reduce_cmd = "reset_reduce", reduce_op = "maximum", range_start = 128 : i64, engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>}>
// GENERIC: "nisa.max8"(%v8, %y) <{engine = "vector"}>
// GENERIC: "nisa.nc_find_index8"(%i32, %y, %v8) <{engine = "vector"}>
// GENERIC: "nisa.nc_match_replace8"(%x, %x, %v8, %min) <{engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
// GENERIC: "nisa.nc_match_replace8"(%y, %x, %v8, %neg, %i16) <{engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC: "nisa.tensor_copy_predicated"(%x, %ps, %p8) <{engine = "vector"}>
// GENERIC: "nisa.tensor_copy_predicated"(%x, %neg, %p8) <{reverse_pred = true, engine = "vector"}>
// GENERIC: "nisa.sequence_bounds"(%bnd, %ids) <{engine = "gpsimd"}>
// GENERIC: "nisa.nonzero_with_count"(%nz, %x) <{index_offset = 16 : i64, padding_val = -1 : i64, engine = "gpsimd"}>
// GENERIC: "nisa.nonzero_with_count"(%nz, %x) <{engine = "gpsimd"}>
// GENERIC: "nisa.topk"(%tv, %ti, %tb) <{n = 200 : i64, engine = "gpsimd"}>
