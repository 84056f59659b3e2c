// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// The vector family lowers 1:1 (instruction.direct_lowering): same roles and NKI op tokens,
// engine filled in -- GpSimd for tensor_partition_reduce, ScalarE for activate2, VectorE
// for the others.

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @vector_ops() {
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.0 : f32
    %a = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nki.ndarray() : memref<128x512xbf16, #nisa.mem<sbuf>>
    %p = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
    %v = nki.ndarray() : memref<128x1xf32, #nisa.mem<sbuf>>
    %r = nki.ndarray() : memref<1x512xf32, #nisa.mem<sbuf>>
    %s = nki.ndarray() : memref<128x6xf32, #nisa.mem<sbuf>>
    %m = nki.ndarray() : memref<128x2xf32, #nisa.mem<sbuf>>
    %i = nki.ndarray() : memref<128x8xi32, #nisa.mem<sbuf>>
    %j = nki.ndarray() : memref<1x8xi32, #nisa.mem<sbuf>>
    nki.scalar_tensor_tensor(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, operand1=memref<128x512xf32, #nisa.mem<psum>> %p, op0=subtract, op1=multiply)
    nki.scalar_tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, operand1=memref<128x512xf32, #nisa.mem<sbuf>> %a, op0=maximum, op1=add, reverse0=true, reverse1=true)
    nki.tensor_partition_reduce(dst=memref<1x512xf32, #nisa.mem<sbuf>> %r, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, op=average) engine=gpsimd
    nki.tensor_partition_reduce(dst=memref<1x8xi32, #nisa.mem<sbuf>> %j, data=memref<128x8xi32, #nisa.mem<sbuf>> %i, op=bitwise_or)
    nki.tensor_scalar_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, operand0=f32 %f1, op0=multiply, reduce_op=add)
    nki.tensor_scalar_reduce(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_init=f32 %f0, op0=subtract, reduce_op=maximum, reduce_cmd=load_reduce, reduce_res_negate=true)
    nki.tensor_scalar_cumulative(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xbf16, #nisa.mem<sbuf>> %b, imm0=f32 %f1, op0=multiply, op1=add)
    nki.tensor_scalar_cumulative(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, imm0=memref<128x1xf32, #nisa.mem<sbuf>> %v, imm1=f32 %f0, op0=add, op1=maximum, reduce_cmd=load_reduce)
    nki.tensor_tensor_scan(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data0=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data1=memref<128x512xf32, #nisa.mem<psum>> %p, initial=f32 %f0, op0=multiply, op1=add)
    nki.tensor_tensor_scan(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data0=memref<128x512xf32, #nisa.mem<sbuf>> %a, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a, initial=memref<128x1xf32, #nisa.mem<sbuf>> %v, op0=subtract, op1=multiply, reverse0=true, reverse1=false)
    nki.bn_stats(dst=memref<128x6xf32, #nisa.mem<sbuf>> %s, data=memref<128x512xbf16, #nisa.mem<sbuf>> %b)
    nki.bn_aggr(dst=memref<128x2xf32, #nisa.mem<sbuf>> %m, data=memref<128x6xf32, #nisa.mem<sbuf>> %s)
    nki.exponential(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<psum>> %p, max_value=f32 %f0)
    nki.exponential(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, max_value=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, reduce_init=f32 %f1, reduce_cmd=load_reduce)
    nki.activate2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, data=memref<128x512xf32, #nisa.mem<psum>> %p, imm0=f32 %f1, imm1=f32 %f0, op=gelu, op0=multiply, op1=add)
    nki.activate2(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, imm0=memref<128x1xf32, #nisa.mem<sbuf>> %v, imm1=f32 %f0, relu_param=f32 %f1, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=prelu, op0=multiply, op1=subtract, reverse0=true, reverse1=true, reduce_op=abs_max, reduce_cmd=reduce)
    func.return
  }
}


// CHECK-LABEL: func.func @vector_ops() {
// CHECK: %j = nisa.alloc alignment=64 {nkim.name = "j"} : memref<1x8xi32, #nisa.mem<sbuf>>
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
// CHECK-NOT: nki.
