// Every op of the nisa dialect (nisa.py: NISA), with optional operands and properties
// both present and absent, round-tripped custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @all_ops(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>, %out: memref<128x512xbf16, #nisa.mem<hbm>>) {
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.0 : f32
    %a = nisa.alloc alignment=64 : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nisa.alloc {nkim.name = "b"} : memref<128x512xf32, #nisa.mem<sbuf>>
    %c = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
    %v = nisa.alloc : memref<128x1xf32, #nisa.mem<sbuf>>
    %w = nisa.alloc : memref<128x8x64xf32, #nisa.mem<sbuf>>
    %p = nisa.alloc {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.bank = 1 : i64} : memref<128x512xf32, #nisa.mem<psum>>
    %t = nisa.alloc : memref<128x128xf32, #nisa.mem<sbuf>>
    %tp = nisa.alloc : memref<128x128xf32, #nisa.mem<psum>>
    %q = nisa.alloc : memref<32x32xf32, #nisa.mem<sbuf>>
    %qt = nisa.alloc : memref<32x32xf32, #nisa.mem<sbuf>>
    %h = nisa.alloc : memref<128x512xf32, #nisa.mem<hbm>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<hbm>> %h, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, dge_mode=no_dge, oob_is_err=true) engine=dma
    nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a) engine=vector
    nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, value=f32 %f0) engine=gpsimd
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %a, rhs=memref<128x512xf32, #nisa.mem<psum>> %p, op=add) engine=vector
    nisa.tensor_scalar_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, op0=multiply) engine=vector
    nisa.tensor_scalar_arith(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %c, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, operand1=memref<128x1xf32, #nisa.mem<sbuf>> %v, op0=subtract, op1=max, reverse_operands=first) engine=scalar
    nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, bias=f32 %f0, scale=f32 %f1, op=exp) engine=scalar
    nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, src=memref<128x512xf32, #nisa.mem<psum>> %p, bias=memref<128x1xf32, #nisa.mem<sbuf>> %v, scale=f32 %f1, op=square, reduce_op=add, reduce_cmd=reset_reduce) engine=scalar
    nisa.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a) engine=vector
    nisa.tensor_reduce_arith(dst=memref<128x1xf32, #nisa.mem<sbuf>> %v, src=memref<128x8x64xf32, #nisa.mem<sbuf>> %w, op=max, negated=false, num_r_dim=2) engine=vector
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %t, moving=memref<128x512xf32, #nisa.mem<sbuf>> %a, is_transpose=false) engine=tensor
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %t, moving=memref<128x512xf32, #nisa.mem<sbuf>> %a, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=accumulate) engine=tensor
    nisa.nc_transpose(dst=memref<128x128xf32, #nisa.mem<psum>> %tp, data=memref<128x128xf32, #nisa.mem<sbuf>> %t) engine=tensor
    nisa.nc_transpose(dst=memref<32x32xf32, #nisa.mem<sbuf>> %qt, data=memref<32x32xf32, #nisa.mem<sbuf>> %q) engine=vector
    nisa.iota(dst=memref<128x8x64xf32, #nisa.mem<sbuf>> %w, pattern=[[64, 8], [1, 64]], offset=0, channel_multiplier=512) engine=gpsimd
    nisa.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %a, on_false_value=f32 %f0, pattern=[[-1, 512]], offset=0, channel_multiplier=1, cmp_op=is_ge) engine=gpsimd
    nisa.release %qt : memref<32x32xf32, #nisa.mem<sbuf>>
    func.return
  }
}

// CHECK: builtin.module attributes {nisa.target = #nisa.target<trn2>} {
// CHECK-LABEL: func.func @all_ops(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>, %out: memref<128x512xbf16, #nisa.mem<hbm>>) {
// CHECK-NEXT: %f0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %f1 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %a = nisa.alloc alignment=64 : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %b = nisa.alloc {nkim.name = "b"} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %c = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
// CHECK-NEXT: %v = nisa.alloc : memref<128x1xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %w = nisa.alloc : memref<128x8x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %p = nisa.alloc {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.bank = 1 : i64} : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT: %t = nisa.alloc : memref<128x128xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %tp = nisa.alloc : memref<128x128xf32, #nisa.mem<psum>>
// CHECK-NEXT: %q = nisa.alloc : memref<32x32xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %qt = nisa.alloc : memref<32x32xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %h = nisa.alloc : memref<128x512xf32, #nisa.mem<hbm>>
// CHECK-NEXT: nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
// CHECK-NEXT: nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<hbm>> %h, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, dge_mode=no_dge, oob_is_err=true) engine=dma
// CHECK-NEXT: nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a) engine=vector
// CHECK-NEXT: nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, value=f32 %f0) engine=gpsimd
// CHECK-NEXT: nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %a, rhs=memref<128x512xf32, #nisa.mem<psum>> %p, op=add) engine=vector
// CHECK-NEXT: nisa.tensor_scalar_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, op0=multiply) engine=vector
// CHECK-NEXT: nisa.tensor_scalar_arith(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %c, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f1, operand1=memref<128x1xf32, #nisa.mem<sbuf>> %v, op0=subtract, op1=max, reverse_operands=first) engine=scalar
// CHECK-NEXT: nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a, bias=f32 %f0, scale=f32 %f1, op=exp) engine=scalar
// CHECK-NEXT: nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, src=memref<128x512xf32, #nisa.mem<psum>> %p, bias=memref<128x1xf32, #nisa.mem<sbuf>> %v, scale=f32 %f1, op=square, reduce_op=add, reduce_cmd=reset_reduce) engine=scalar
// CHECK-NEXT: nisa.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a) engine=vector
// CHECK-NEXT: nisa.tensor_reduce_arith(dst=memref<128x1xf32, #nisa.mem<sbuf>> %v, src=memref<128x8x64xf32, #nisa.mem<sbuf>> %w, op=max, negated=false, num_r_dim=2) engine=vector
// CHECK-NEXT: nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %t, moving=memref<128x512xf32, #nisa.mem<sbuf>> %a, is_transpose=false) engine=tensor
// CHECK-NEXT: nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %t, moving=memref<128x512xf32, #nisa.mem<sbuf>> %a, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=accumulate) engine=tensor
// CHECK-NEXT: nisa.nc_transpose(dst=memref<128x128xf32, #nisa.mem<psum>> %tp, data=memref<128x128xf32, #nisa.mem<sbuf>> %t) engine=tensor
// CHECK-NEXT: nisa.nc_transpose(dst=memref<32x32xf32, #nisa.mem<sbuf>> %qt, data=memref<32x32xf32, #nisa.mem<sbuf>> %q) engine=vector
// CHECK-NEXT: nisa.iota(dst=memref<128x8x64xf32, #nisa.mem<sbuf>> %w, pattern={{\[\[}}64, 8], [1, 64]], offset=0, channel_multiplier=512) engine=gpsimd
// CHECK-NEXT: nisa.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %a, on_false_value=f32 %f0, pattern={{\[\[}}-1, 512]], offset=0, channel_multiplier=1, cmp_op=is_ge) engine=gpsimd
// CHECK-NEXT: nisa.release %qt : memref<32x32xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: func.return

// The generic form: engine and enums are properties, optional operands are counted in
// operandSegmentSizes, placement is a discardable nkim.* attribute.
// GENERIC:      "nisa.alloc"() <{alignment = 64 : i64}> : () -> memref<128x512xf32, #nisa.mem<sbuf>>
// GENERIC:      "nisa.alloc"() {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.bank = 1 : i64} : () -> memref<128x512xf32, #nisa.mem<psum>>
// GENERIC:      "nisa.dma_copy"(%a, %in) <{engine = "dma"}>
// GENERIC:      "nisa.dma_copy"(%h, %a) <{dge_mode = "no_dge", oob_is_err = true, engine = "dma"}>
// GENERIC:      "nisa.tensor_scalar_arith"(%b, %a, %f1) <{op0 = "multiply", engine = "vector", operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// GENERIC:      "nisa.activation"(%b, %a, %f0, %f1) <{op = "exp", engine = "scalar", operandSegmentSizes = array<i32: 1, 0, 1, 1, 1>}>
// GENERIC:      "nisa.activation"(%b, %v, %p, %v, %f1) <{op = "square", reduce_op = "add", reduce_cmd = "reset_reduce", engine = "scalar", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
// GENERIC:      "nisa.tensor_reduce_arith"(%v, %w) <{op = "max", negated = false, num_r_dim = 2 : i64, engine = "vector"}>
// GENERIC:      "nisa.matmul"(%p, %t, %a) <{is_transpose = false, engine = "tensor", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
// GENERIC:      "nisa.iota"(%w) <{pattern = {{\[\[}}64 : i64, 8 : i64], [1 : i64, 64 : i64]], offset = 0 : i64, channel_multiplier = 512 : i64, engine = "gpsimd", operandSegmentSizes = array<i32: 1, 0>}>
// GENERIC:      "nisa.release"(%qt) : (memref<32x32xf32, #nisa.mem<sbuf>>) -> ()
