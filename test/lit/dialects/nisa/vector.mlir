// The vector-family nisa instructions (dialects/isa_vector.py), optional operands and
// properties present and absent, round-tripped custom -> custom and through the generic form.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @vector_ops() {
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.0 : f32
    %a = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
    %p = nisa.alloc : memref<128x512xf32, #nisa.mem<psum>>
    %v = nisa.alloc : memref<128x1xf32, #nisa.mem<sbuf>>
    %r = nisa.alloc : memref<1x512xf32, #nisa.mem<sbuf>>
    %s = nisa.alloc : memref<128x6xf32, #nisa.mem<sbuf>>
    %m = nisa.alloc : memref<128x2xf32, #nisa.mem<sbuf>>
    %i = nisa.alloc : memref<128x8xi32, #nisa.mem<sbuf>>
    %j = nisa.alloc : memref<1x8xi32, #nisa.mem<sbuf>>
    nisa.scalar_tensor_tensor(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, operand1=memref<128x512xf32, #nisa.mem<psum>> %p, op0=subtract, op1=multiply) engine=vector
    nisa.scalar_tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, operand1=memref<128x512xf32, #nisa.mem<sbuf>> %a, op0=maximum, op1=add, reverse0=true, reverse1=true) engine=vector
    nisa.tensor_partition_reduce(dst=memref<1x512xf32, #nisa.mem<sbuf>> %r, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, op=average) engine=gpsimd
    nisa.tensor_partition_reduce(dst=memref<1x8xi32, #nisa.mem<sbuf>> %j, data=memref<128x8xi32, #nisa.mem<sbuf>> %i, op=bitwise_or) engine=gpsimd
    nisa.tensor_scalar_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, operand0=f32 %f1, op0=multiply, reduce_op=add) engine=vector
    nisa.tensor_scalar_reduce(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_init=f32 %f0, op0=subtract, reduce_op=maximum, reduce_cmd=load_reduce, reduce_res_negate=true) engine=vector
    nisa.tensor_scalar_cumulative(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xbf16, #nisa.mem<sbuf>> %b, imm0=f32 %f1, op0=multiply, op1=add) engine=vector
    nisa.tensor_scalar_cumulative(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, imm0=memref<128x1xf32, #nisa.mem<sbuf>> %v, imm1=f32 %f0, op0=add, op1=maximum, reduce_cmd=load_reduce) engine=vector
    nisa.tensor_tensor_scan(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data0=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data1=memref<128x512xf32, #nisa.mem<psum>> %p, initial=f32 %f0, op0=multiply, op1=add) engine=vector
    nisa.tensor_tensor_scan(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data0=memref<128x512xf32, #nisa.mem<sbuf>> %a, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a, initial=memref<128x1xf32, #nisa.mem<sbuf>> %v, op0=subtract, op1=multiply, reverse0=true, reverse1=false) engine=vector
    nisa.bn_stats(dst=memref<128x6xf32, #nisa.mem<sbuf>> %s, data=memref<128x512xbf16, #nisa.mem<sbuf>> %b) engine=vector
    nisa.bn_aggr(dst=memref<128x2xf32, #nisa.mem<sbuf>> %m, data=memref<128x6xf32, #nisa.mem<sbuf>> %s) engine=vector
    nisa.exponential(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<psum>> %p, max_value=f32 %f0) engine=vector
    nisa.exponential(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, max_value=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_init=f32 %f1, reduce_cmd=load_reduce) engine=vector
    nisa.activate2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, imm0=f32 %f1, imm1=f32 %f0, op=gelu, op0=multiply, op1=add) engine=scalar
    nisa.activate2(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, imm0=memref<128x1xf32, #nisa.mem<sbuf>> %v, imm1=f32 %f0, relu_param=f32 %f1, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=prelu, op0=multiply, op1=subtract, reverse0=true, reverse1=true, reduce_op=abs_max, reduce_cmd=reduce) engine=scalar
    func.return
  }
}

// CHECK: builtin.module attributes {nisa.target = #nisa.target<trn3>} {
// CHECK-LABEL: func.func @vector_ops() {
// CHECK: %j = nisa.alloc : memref<1x8xi32, #nisa.mem<sbuf>>
// CHECK-NEXT: nisa.scalar_tensor_tensor(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, operand1=memref<128x512xf32, #nisa.mem<psum>> %p, op0=subtract, op1=multiply) engine=vector
// CHECK-NEXT: nisa.scalar_tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, operand1=memref<128x512xf32, #nisa.mem<sbuf>> %a, op0=maximum, op1=add, reverse0=true, reverse1=true) engine=vector
// CHECK-NEXT: nisa.tensor_partition_reduce(dst=memref<1x512xf32, #nisa.mem<sbuf>> %r, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, op=average) engine=gpsimd
// CHECK-NEXT: nisa.tensor_partition_reduce(dst=memref<1x8xi32, #nisa.mem<sbuf>> %j, data=memref<128x8xi32, #nisa.mem<sbuf>> %i, op=bitwise_or) engine=gpsimd
// CHECK-NEXT: nisa.tensor_scalar_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, operand0=f32 %f1, op0=multiply, reduce_op=add) engine=vector
// CHECK-NEXT: nisa.tensor_scalar_reduce(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_init=f32 %f0, op0=subtract, reduce_op=maximum, reduce_cmd=load_reduce, reduce_res_negate=true) engine=vector
// CHECK-NEXT: nisa.tensor_scalar_cumulative(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xbf16, #nisa.mem<sbuf>> %b, imm0=f32 %f1, op0=multiply, op1=add) engine=vector
// CHECK-NEXT: nisa.tensor_scalar_cumulative(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, imm0=memref<128x1xf32, #nisa.mem<sbuf>> %v, imm1=f32 %f0, op0=add, op1=maximum, reduce_cmd=load_reduce) engine=vector
// CHECK-NEXT: nisa.tensor_tensor_scan(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data0=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data1=memref<128x512xf32, #nisa.mem<psum>> %p, initial=f32 %f0, op0=multiply, op1=add) engine=vector
// CHECK-NEXT: nisa.tensor_tensor_scan(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data0=memref<128x512xf32, #nisa.mem<sbuf>> %a, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a, initial=memref<128x1xf32, #nisa.mem<sbuf>> %v, op0=subtract, op1=multiply, reverse0=true, reverse1=false) engine=vector
// CHECK-NEXT: nisa.bn_stats(dst=memref<128x6xf32, #nisa.mem<sbuf>> %s, data=memref<128x512xbf16, #nisa.mem<sbuf>> %b) engine=vector
// CHECK-NEXT: nisa.bn_aggr(dst=memref<128x2xf32, #nisa.mem<sbuf>> %m, data=memref<128x6xf32, #nisa.mem<sbuf>> %s) engine=vector
// CHECK-NEXT: nisa.exponential(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<psum>> %p, max_value=f32 %f0) engine=vector
// CHECK-NEXT: nisa.exponential(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, max_value=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_init=f32 %f1, reduce_cmd=load_reduce) engine=vector
// CHECK-NEXT: nisa.activate2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, imm0=f32 %f1, imm1=f32 %f0, op=gelu, op0=multiply, op1=add) engine=scalar
// CHECK-NEXT: nisa.activate2(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, imm0=memref<128x1xf32, #nisa.mem<sbuf>> %v, imm1=f32 %f0, relu_param=f32 %f1, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=prelu, op0=multiply, op1=subtract, reverse0=true, reverse1=true, reduce_op=abs_max, reduce_cmd=reduce) engine=scalar
// CHECK-NEXT: func.return

// Generic form: op tokens and flags are properties; optional operands are counted in
// operandSegmentSizes.
// GENERIC: "nisa.tensor_partition_reduce"(%r, %a) <{op = "average", engine = "gpsimd"}>
// GENERIC: "nisa.tensor_scalar_reduce"(%a, %p, %f1) <{op0 = "multiply", reduce_op = "add", engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
// GENERIC: "nisa.tensor_scalar_reduce"(%b, %a, %v, %v, %f0) <{op0 = "subtract", reduce_op = "maximum", reduce_cmd = "load_reduce", reduce_res_negate = true, engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC: "nisa.bn_stats"(%s, %b) <{engine = "vector"}>
// GENERIC: "nisa.exponential"(%a, %p, %f0) <{engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
// GENERIC: "nisa.activate2"(%b, %a, %v, %f0, %f1, %v) <{op = "prelu", op0 = "multiply", op1 = "subtract", reverse0 = true, reverse1 = true, reduce_op = "abs_max", reduce_cmd = "reduce", engine = "scalar", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>}>
