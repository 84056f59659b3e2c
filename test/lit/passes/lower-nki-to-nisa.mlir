// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// One nisa instruction per nki op; AWS op names, roles and enum spellings; engines chosen.

func.func @lower(%a: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
  %t = nki.ndarray(name="t") : memref<128x512xf32, #nisa.mem<sbuf>>
  %u = nki.ndarray(name="u", address=[0, 4096]) : memref<128x512xf32, #nisa.mem<sbuf>>
  %r = nki.ndarray() : memref<128x1xf32, #nisa.mem<sbuf>>
  %w = nki.ndarray() : memref<128x128xf32, #nisa.mem<sbuf>>
  %p = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
  %i = nki.ndarray() : memref<128x512xi32, #nisa.mem<sbuf>>
  %c = arith.constant 0.5 : f32
  %k = arith.constant 256 : index
  %p2 = nki.ndarray() : memref<128x128xf32, #nisa.mem<psum>>
  nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %t, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %a)
  nki.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, src=memref<128x512xf32, #nisa.mem<sbuf>> %t) engine=scalar
  nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, data1=memref<128x512xf32, #nisa.mem<sbuf>> %t, data2=memref<128x512xf32, #nisa.mem<sbuf>> %u, op=maximum)
  nki.tensor_tensor(dst=memref<128x512xi32, #nisa.mem<sbuf>> %i, data1=memref<128x512xi32, #nisa.mem<sbuf>> %i, data2=memref<128x512xi32, #nisa.mem<sbuf>> %i, op=add)
  nki.tensor_scalar(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, data=memref<128x512xf32, #nisa.mem<sbuf>> %t, operand0=f32 %c, operand1=memref<128x1xf32, #nisa.mem<sbuf>> %r, op0=subtract, op1=greater_equal, reverse0=true)
  nki.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, data=memref<128x512xf32, #nisa.mem<sbuf>> %t, scale=f32 %c, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %r, op=exp, reduce_op=add, reduce_cmd=reset_reduce)
  nki.activation_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, data=memref<128x512xf32, #nisa.mem<sbuf>> %t, bias=memref<128x1xf32, #nisa.mem<sbuf>> %r, scale=f32 %c, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %r, op=square, reduce_op=add)
  nki.tensor_reduce(dst=memref<128x1xf32, #nisa.mem<sbuf>> %r, data=memref<128x512xf32, #nisa.mem<sbuf>> %t, op=maximum, axis=[1], negate=true, keepdims=true)
  nki.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, data=memref<128x512xf32, #nisa.mem<sbuf>> %t)
  nki.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, value=f32 %c) engine=gpsimd
  nki.iota(dst=memref<128x512xi32, #nisa.mem<sbuf>> %i, pattern=[[1, 512]], offset=3, channel_multiplier=512)
  nki.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %t, on_false_value=f32 %c, pattern=[[-1, 512]], offset=0, channel_multiplier=1, cmp_op=greater_equal)
  nki.iota(dst=memref<128x512xi32, #nisa.mem<sbuf>> %i, offset_index=index %k, pattern=[[1, 512]], offset=3, channel_multiplier=512)
  nki.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %t, on_false_value=f32 %c, offset_index=index %k, pattern=[[-1, 512]], offset=0, channel_multiplier=1, cmp_op=greater_equal)
  nki.nc_matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %w, moving=memref<128x512xf32, #nisa.mem<sbuf>> %t)
  nki.nc_matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %w, moving=memref<128x512xf32, #nisa.mem<sbuf>> %t, accumulate=true)
  nki.nc_transpose(dst=memref<128x128xf32, #nisa.mem<psum>> %p2, data=memref<128x128xf32, #nisa.mem<sbuf>> %w)
  func.return
}

// CHECK-LABEL: func.func @lower
// CHECK:      %t = nisa.alloc alignment=64 {nkim.name = "t"} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK:      %u = nisa.alloc alignment=64 {nkim.name = "u", nkim.address = [0 : i64, 4096 : i64]} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK:      nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %t, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %a, oob_is_err=true) engine=dma
// CHECK-NEXT: nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, src=memref<128x512xf32, #nisa.mem<sbuf>> %t) engine=scalar
// CHECK-NEXT: nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %t, rhs=memref<128x512xf32, #nisa.mem<sbuf>> %u, op=max) engine=vector
// CHECK-NEXT: nisa.tensor_tensor_arith({{.*}}op=add) engine=gpsimd
// CHECK-NEXT: nisa.tensor_scalar_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, src=memref<128x512xf32, #nisa.mem<sbuf>> %t, operand0=f32 %c, operand1=memref<128x1xf32, #nisa.mem<sbuf>> %r, op0=subtract, op1=is_ge, reverse_operands=first) engine=vector
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %r, src=memref<128x512xf32, #nisa.mem<sbuf>> %t, bias=f32 %[[Z]], scale=f32 %c, op=exp, reduce_op=add, reduce_cmd=reset_reduce) engine=scalar
// CHECK-NEXT: nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %r, src=memref<128x512xf32, #nisa.mem<sbuf>> %t, bias=memref<128x1xf32, #nisa.mem<sbuf>> %r, scale=f32 %c, op=square, reduce_op=add, reduce_cmd=reset_reduce) engine=scalar
// CHECK-NEXT: nisa.tensor_reduce_arith(dst=memref<128x1xf32, #nisa.mem<sbuf>> %r, src=memref<128x512xf32, #nisa.mem<sbuf>> %t, op=max, negated=true, num_r_dim=1) engine=vector
// CHECK-NEXT: nisa.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, src=memref<128x512xf32, #nisa.mem<sbuf>> %t) engine=vector
// CHECK-NEXT: nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, value=f32 %c) engine=gpsimd
// CHECK-NEXT: nisa.iota(dst=memref<128x512xi32, #nisa.mem<sbuf>> %i, pattern=[[1, 512]], offset=3, channel_multiplier=512) engine=gpsimd
// CHECK-NEXT: nisa.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %t, on_false_value=f32 %c, pattern=[[-1, 512]], offset=0, channel_multiplier=1, cmp_op=is_ge) engine=gpsimd
// CHECK-NEXT: nisa.iota(dst=memref<128x512xi32, #nisa.mem<sbuf>> %i, offset_index=index %k, pattern=[[1, 512]], offset=3, channel_multiplier=512) engine=gpsimd
// CHECK-NEXT: nisa.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %t, on_false_value=f32 %c, offset_index=index %k, pattern=[[-1, 512]], offset=0, channel_multiplier=1, cmp_op=is_ge) engine=gpsimd
// CHECK-NEXT: nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %w, moving=memref<128x512xf32, #nisa.mem<sbuf>> %t, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=auto) engine=tensor
// CHECK-NEXT: nisa.matmul({{.*}}psum_accumulate_flags=accumulate) engine=tensor
// CHECK-NEXT: nisa.nc_transpose(dst=memref<128x128xf32, #nisa.mem<psum>> %p2, data=memref<128x128xf32, #nisa.mem<sbuf>> %w) engine=tensor
// CHECK-NOT:  nki.
