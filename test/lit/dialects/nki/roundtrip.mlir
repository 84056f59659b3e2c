// Every op of the nki dialect (nki.py: NKI), with optional operands, properties and
// engines both present and absent, round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @all_ops(%in: memref<256x512xf32, #nisa.mem<shared_hbm>>, %w: memref<128x128xbf16, #nisa.mem<hbm>>) -> memref<128x512xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
    %f0 = arith.constant 0.0 : f32
    %f2 = arith.constant 2.0 : f32
    %out = nki.ndarray(name=out) : memref<128x512xf32, #nisa.mem<shared_hbm>>
    %a = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nki.ndarray(name=b, address=[0, 4096]) : memref<128x512xf32, #nisa.mem<sbuf>>
    %c = nki.ndarray(name="c tile") : memref<128x512xbf16, #nisa.mem<sbuf>>
    %v = nki.ndarray() : memref<128x1xf32, #nisa.mem<sbuf>>
    %r = nki.ndarray() : memref<128x8x64xf32, #nisa.mem<sbuf>>
    %v8 = nki.ndarray() : memref<128x8xf32, #nisa.mem<sbuf>>
    %t = nki.ndarray() : memref<128x128xbf16, #nisa.mem<sbuf>>
    %m = nki.ndarray() : memref<128x128xbf16, #nisa.mem<sbuf>>
    %tp = nki.ndarray() : memref<128x128xbf16, #nisa.mem<psum>>
    %pm = nki.ndarray() : memref<128x128xf32, #nisa.mem<psum>>
    %q = nki.ndarray() : memref<32x32xf32, #nisa.mem<sbuf>>
    %qt = nki.ndarray() : memref<32x32xf32, #nisa.mem<sbuf>>
    %p = nki.zeros(name=acc) : memref<128x512xf32, #nisa.mem<psum>>
    %z = nki.zeros() : memref<128x512xf32, #nisa.mem<sbuf>>
    %in0 = memref.subview %in[0, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1]>, #nisa.mem<shared_hbm>>
    nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, strided<[512, 1]>, #nisa.mem<shared_hbm>> %in0)
    nki.dma_copy(dst=memref<128x128xbf16, #nisa.mem<sbuf>> %t, src=memref<128x128xbf16, #nisa.mem<hbm>> %w, dge_mode=none, oob_mode=error) engine=sync
    nki.tensor_copy(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %c, src=memref<128x512xf32, #nisa.mem<sbuf>> %a)
    nki.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<psum>> %p) engine=scalar
    nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a, data2=memref<128x512xf32, #nisa.mem<psum>> %p, op=maximum) engine=vector
    nki.tensor_scalar(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f2, op0=multiply)
    nki.tensor_scalar(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, operand1=f32 %f0, op0=subtract, op1=maximum, reverse0=true, reverse1=false) engine=gpsimd
    nki.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, scale=f32 %f2, op=exp)
    nki.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<psum>> %p, bias=memref<128x1xf32, #nisa.mem<sbuf>> %v, scale=f32 %f2, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=square, reduce_op=add, reduce_cmd=reset_reduce) engine=scalar
    nki.activation_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, bias=f32 %f0, scale=f32 %f2, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=tanh, reduce_op=add)
    nki.tensor_reduce(dst=memref<128x1xf32, #nisa.mem<sbuf>> %v, data=memref<128x8x64xf32, #nisa.mem<sbuf>> %r, op=add, axis=[1, 2])
    nki.tensor_reduce(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, data=memref<128x8x64xf32, #nisa.mem<sbuf>> %r, op=maximum, axis=[2], negate=true, keepdims=false) engine=vector
    nki.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a)
    nki.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, value=f32 %f0) engine=gpsimd
    nki.iota(dst=memref<128x8x64xf32, #nisa.mem<sbuf>> %r, pattern=[[64, 8], [1, 64]], offset=0, channel_multiplier=512)
    nki.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %a, on_false_value=f32 %f0, pattern=[[-1, 512]], offset=0, channel_multiplier=1, cmp_op=greater_equal)
    nki.nc_matmul(dst=memref<128x128xf32, #nisa.mem<psum>> %pm, stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %t, moving=memref<128x128xbf16, #nisa.mem<sbuf>> %m)
    nki.nc_matmul(dst=memref<128x128xf32, #nisa.mem<psum>> %pm, stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %t, moving=memref<128x128xbf16, #nisa.mem<sbuf>> %m, accumulate=true) engine=tensor
    nki.nc_transpose(dst=memref<128x128xbf16, #nisa.mem<psum>> %tp, data=memref<128x128xbf16, #nisa.mem<sbuf>> %t)
    nki.nc_transpose(dst=memref<32x32xf32, #nisa.mem<sbuf>> %qt, data=memref<32x32xf32, #nisa.mem<sbuf>> %q) engine=vector
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %row = arith.muli %i, %c128 : index
      %src = memref.subview %in[%row, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>
      %x = nki.load(src=memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>> %src) : memref<128x512xf32, #nisa.mem<sbuf>>
      %y = nki.add(x=memref<128x512xf32, #nisa.mem<sbuf>> %x, y=memref<128x512xf32, #nisa.mem<sbuf>> %a) : memref<128x512xf32, #nisa.mem<sbuf>>
      %y2 = nki.add(x=memref<128x512xf32, #nisa.mem<sbuf>> %y, y=f32 %f2) : memref<128x512xf32, #nisa.mem<sbuf>>
      %u = nki.multiply(x=memref<128x512xf32, #nisa.mem<sbuf>> %y2, y=f32 %f2) : memref<128x512xf32, #nisa.mem<sbuf>>
      %e = nki.exp(x=memref<128x512xf32, #nisa.mem<sbuf>> %u) : memref<128x512xf32, #nisa.mem<sbuf>>
      nki.store(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %out, value=memref<128x512xf32, #nisa.mem<sbuf>> %e)
    } {nki.range = "affine"}
    %mm = nki.matmul(x=memref<128x128xbf16, #nisa.mem<sbuf>> %t, y=memref<128x128xbf16, #nisa.mem<sbuf>> %m) : memref<128x128xf32, #nisa.mem<psum>>
    %mt = nki.matmul(x=memref<128x128xbf16, #nisa.mem<sbuf>> %t, y=memref<128x128xbf16, #nisa.mem<sbuf>> %m, transpose_x=true) : memref<128x128xf32, #nisa.mem<psum>>
    func.return %out : memref<128x512xf32, #nisa.mem<shared_hbm>>
  }
}

// CHECK: builtin.module attributes {nisa.target = #nisa.target<trn2>} {
// CHECK-LABEL: func.func @all_ops(%in: memref<256x512xf32, #nisa.mem<shared_hbm>>, %w: memref<128x128xbf16, #nisa.mem<hbm>>) -> memref<128x512xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
// CHECK-NEXT: %f0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %f2 = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %out = nki.ndarray(name=out) : memref<128x512xf32, #nisa.mem<shared_hbm>>
// CHECK-NEXT: %a = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %b = nki.ndarray(name=b, address=[0, 4096]) : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %c = nki.ndarray(name="c tile") : memref<128x512xbf16, #nisa.mem<sbuf>>
// CHECK-NEXT: %v = nki.ndarray() : memref<128x1xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %r = nki.ndarray() : memref<128x8x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %v8 = nki.ndarray() : memref<128x8xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %t = nki.ndarray() : memref<128x128xbf16, #nisa.mem<sbuf>>
// CHECK-NEXT: %m = nki.ndarray() : memref<128x128xbf16, #nisa.mem<sbuf>>
// CHECK-NEXT: %tp = nki.ndarray() : memref<128x128xbf16, #nisa.mem<psum>>
// CHECK-NEXT: %pm = nki.ndarray() : memref<128x128xf32, #nisa.mem<psum>>
// CHECK-NEXT: %q = nki.ndarray() : memref<32x32xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %qt = nki.ndarray() : memref<32x32xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %p = nki.zeros(name=acc) : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT: %z = nki.zeros() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %in0 = memref.subview %in[0, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1]>, #nisa.mem<shared_hbm>>
// CHECK-NEXT: nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, strided<[512, 1]>, #nisa.mem<shared_hbm>> %in0)
// CHECK-NEXT: nki.dma_copy(dst=memref<128x128xbf16, #nisa.mem<sbuf>> %t, src=memref<128x128xbf16, #nisa.mem<hbm>> %w, dge_mode=none, oob_mode=error) engine=sync
// CHECK-NEXT: nki.tensor_copy(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %c, src=memref<128x512xf32, #nisa.mem<sbuf>> %a)
// CHECK-NEXT: nki.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<psum>> %p) engine=scalar
// CHECK-NEXT: nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a, data2=memref<128x512xf32, #nisa.mem<psum>> %p, op=maximum) engine=vector
// CHECK-NEXT: nki.tensor_scalar(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=f32 %f2, op0=multiply)
// CHECK-NEXT: nki.tensor_scalar(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %v, operand1=f32 %f0, op0=subtract, op1=maximum, reverse0=true, reverse1=false) engine=gpsimd
// CHECK-NEXT: nki.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, scale=f32 %f2, op=exp)
// CHECK-NEXT: nki.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<psum>> %p, bias=memref<128x1xf32, #nisa.mem<sbuf>> %v, scale=f32 %f2, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=square, reduce_op=add, reduce_cmd=reset_reduce) engine=scalar
// CHECK-NEXT: nki.activation_reduce(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a, bias=f32 %f0, scale=f32 %f2, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %v, op=tanh, reduce_op=add)
// CHECK-NEXT: nki.tensor_reduce(dst=memref<128x1xf32, #nisa.mem<sbuf>> %v, data=memref<128x8x64xf32, #nisa.mem<sbuf>> %r, op=add, axis=[1, 2])
// CHECK-NEXT: nki.tensor_reduce(dst=memref<128x8xf32, #nisa.mem<sbuf>> %v8, data=memref<128x8x64xf32, #nisa.mem<sbuf>> %r, op=maximum, axis=[2], negate=true, keepdims=false) engine=vector
// CHECK-NEXT: nki.reciprocal(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, data=memref<128x512xf32, #nisa.mem<sbuf>> %a)
// CHECK-NEXT: nki.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, value=f32 %f0) engine=gpsimd
// CHECK-NEXT: nki.iota(dst=memref<128x8x64xf32, #nisa.mem<sbuf>> %r, pattern={{\[\[}}64, 8], [1, 64]], offset=0, channel_multiplier=512)
// CHECK-NEXT: nki.affine_select(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, on_true_tile=memref<128x512xf32, #nisa.mem<sbuf>> %a, on_false_value=f32 %f0, pattern={{\[\[}}-1, 512]], offset=0, channel_multiplier=1, cmp_op=greater_equal)
// CHECK-NEXT: nki.nc_matmul(dst=memref<128x128xf32, #nisa.mem<psum>> %pm, stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %t, moving=memref<128x128xbf16, #nisa.mem<sbuf>> %m)
// CHECK-NEXT: nki.nc_matmul(dst=memref<128x128xf32, #nisa.mem<psum>> %pm, stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %t, moving=memref<128x128xbf16, #nisa.mem<sbuf>> %m, accumulate=true) engine=tensor
// CHECK-NEXT: nki.nc_transpose(dst=memref<128x128xbf16, #nisa.mem<psum>> %tp, data=memref<128x128xbf16, #nisa.mem<sbuf>> %t)
// CHECK-NEXT: nki.nc_transpose(dst=memref<32x32xf32, #nisa.mem<sbuf>> %qt, data=memref<32x32xf32, #nisa.mem<sbuf>> %q) engine=vector
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %c128 = arith.constant 128 : index
// CHECK-NEXT: scf.for %i = %c0 to %c2 step %c1 {
// CHECK-NEXT: %row = arith.muli %i, %c128 : index
// CHECK-NEXT: %src = memref.subview %in[%row, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>
// CHECK-NEXT: %x = nki.load(src=memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>> %src) : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %y = nki.add(x=memref<128x512xf32, #nisa.mem<sbuf>> %x, y=memref<128x512xf32, #nisa.mem<sbuf>> %a) : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %y2 = nki.add(x=memref<128x512xf32, #nisa.mem<sbuf>> %y, y=f32 %f2) : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %u = nki.multiply(x=memref<128x512xf32, #nisa.mem<sbuf>> %y2, y=f32 %f2) : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %e = nki.exp(x=memref<128x512xf32, #nisa.mem<sbuf>> %u) : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: nki.store(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %out, value=memref<128x512xf32, #nisa.mem<sbuf>> %e)
// CHECK-NEXT: } {nki.range = "affine"}
// CHECK-NEXT: %mm = nki.matmul(x=memref<128x128xbf16, #nisa.mem<sbuf>> %t, y=memref<128x128xbf16, #nisa.mem<sbuf>> %m) : memref<128x128xf32, #nisa.mem<psum>>
// CHECK-NEXT: %mt = nki.matmul(x=memref<128x128xbf16, #nisa.mem<sbuf>> %t, y=memref<128x128xbf16, #nisa.mem<sbuf>> %m, transpose_x=true) : memref<128x128xf32, #nisa.mem<psum>>
// CHECK-NEXT: func.return %out : memref<128x512xf32, #nisa.mem<shared_hbm>>

// The generic form: the tensor name and address are properties; absent optional
// operands show in operandSegmentSizes; an absent engine is simply not there.
// GENERIC: "nki.ndarray"() <{name = "out"}> : () -> memref<128x512xf32, #nisa.mem<shared_hbm>>
// GENERIC: "nki.ndarray"() <{name = "b", address = [0 : i64, 4096 : i64]}> : () -> memref<128x512xf32, #nisa.mem<sbuf>>
// GENERIC: "nki.zeros"() <{name = "acc"}> : () -> memref<128x512xf32, #nisa.mem<psum>>
// GENERIC: "nki.dma_copy"(%a, %in0) : (memref<128x512xf32, #nisa.mem<sbuf>>, memref<128x512xf32, strided<[512, 1]>, #nisa.mem<shared_hbm>>) -> ()
// GENERIC: "nki.dma_copy"(%t, %w) <{dge_mode = "none", oob_mode = "error", engine = "sync"}>
// GENERIC: "nki.tensor_scalar"(%b, %a, %f2) <{op0 = "multiply", operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// GENERIC: "nki.tensor_scalar"(%b, %a, %v, %f0) <{op0 = "subtract", op1 = "maximum", reverse0 = true, reverse1 = false, engine = "gpsimd", operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
// GENERIC: "nki.activation"(%b, %a, %f2) <{op = "exp", operandSegmentSizes = array<i32: 1, 1, 0, 1, 0>}>
// GENERIC: "nki.tensor_reduce"(%v, %r) <{op = "add", axis = [1 : i64, 2 : i64]}>
// GENERIC: "nki.nc_matmul"(%pm, %t, %m) <{accumulate = true, engine = "tensor"}>
// GENERIC: "scf.for"(%c0, %c2, %c1) ({
// GENERIC: "nki.load"(%src) : (memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>) -> memref<128x512xf32, #nisa.mem<sbuf>>
// GENERIC: "nki.store"(%out, %e) : (memref<128x512xf32, #nisa.mem<shared_hbm>>, memref<128x512xf32, #nisa.mem<sbuf>>) -> ()
// GENERIC: }) {nki.range = "affine"} : (index, index, index) -> ()
// GENERIC: "nki.matmul"(%t, %m) <{transpose_x = true}>
