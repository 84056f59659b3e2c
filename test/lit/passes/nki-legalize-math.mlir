// RUN: %nki-opt %s -p nki-legalize | filecheck %s
// The generic nl.* sugar ops (dialects/nki_sugar.py) become explicit allocations, temporaries
// and destination-style instructions on the engines the NKI docs name (passes/legalize_math.py).

func.func @math(%a: memref<128x64xf32, #nisa.mem<sbuf>>, %col: memref<128x1xbf16, #nisa.mem<sbuf>>, %row: memref<1x64xf32, #nisa.mem<sbuf>>, %p: memref<128x64xf32, #nisa.mem<psum>>, %i: memref<128x64xi32, #nisa.mem<sbuf>>, %c3: memref<16x1x8xf32, #nisa.mem<sbuf>>, %seed: memref<1x1xi32, #nisa.mem<sbuf>>, %idx: memref<128x8xui32, #nisa.mem<sbuf>>) {
  %two = arith.constant 2.0 : f32
  %e = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=exp) : memref<128x64xbf16, #nisa.mem<sbuf>>
  %s = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=sin) : memref<128x64xf32, #nisa.mem<sbuf>>
  %fl = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=floor) : memref<128x64xf32, #nisa.mem<sbuf>>
  %rs = nki.unary(x=memref<128x64xf32, #nisa.mem<psum>> %p, fn=rsqrt) : memref<128x64xf32, #nisa.mem<sbuf>>
  %inv = nki.unary(x=memref<128x64xi32, #nisa.mem<sbuf>> %i, fn=invert) : memref<128x64xi32, #nisa.mem<sbuf>>
  %sub = nki.binary(x=f32 %two, y=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=subtract) : memref<128x64xf32, #nisa.mem<sbuf>>
  %div = nki.binary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, y=memref<128x1xbf16, #nisa.mem<sbuf>> %col, fn=divide) : memref<128x64xf32, #nisa.mem<sbuf>>
  %pw = nki.binary(x=memref<128x64xf32, #nisa.mem<psum>> %p, y=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=power) : memref<128x64xf32, #nisa.mem<sbuf>>
  %gt = nki.binary(x=memref<1x64xf32, #nisa.mem<sbuf>> %row, y=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=greater) : memref<128x64xf32, #nisa.mem<sbuf>>
  %bc = nki.broadcast_to(x=memref<16x1x8xf32, #nisa.mem<sbuf>> %c3) : memref<16x2x8xf32, #nisa.mem<sbuf>>
  %sum = nki.reduce(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=sum, axis=[1]) : memref<128x1xf32, #nisa.mem<sbuf>>
  %mean = nki.reduce(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=mean, axis=[1]) : memref<128x1xbf16, #nisa.mem<sbuf>>
  %sm = nki.softmax(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, axis=[1]) : memref<128x64xf32, #nisa.mem<sbuf>>
  %t = nki.transpose(x=memref<128x64xf32, #nisa.mem<sbuf>> %a) : memref<64x128xf32, #nisa.mem<psum>>
  %w = nki.where(cond=memref<128x64xf32, #nisa.mem<sbuf>> %a, x=memref<128x64xf32, #nisa.mem<sbuf>> %a, y=f32 %two) : memref<128x64xf32, #nisa.mem<sbuf>>
  %f = nki.full(value=f32 %two, name=twos) : memref<4x4xf32, #nisa.mem<sbuf>>
  %id = nki.shared_identity_matrix() : memref<8x8xui8, #nisa.mem<sbuf>>
  %r = nki.rand() : memref<128x64xbf16, #nisa.mem<sbuf>>
  nki.random_seed(seed=memref<1x1xi32, #nisa.mem<sbuf>> %seed)
  %d = nki.nl_dropout(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, rate=f32 %two) : memref<128x64xf32, #nisa.mem<sbuf>>
  %g = nki.gather_flattened(data=memref<128x64xf32, #nisa.mem<sbuf>> %a, indices=memref<128x8xui32, #nisa.mem<sbuf>> %idx) : memref<128x8xf32, #nisa.mem<sbuf>>
  func.return
}

// CHECK-LABEL: func.func @math
// CHECK-NOT:   nki.unary
// activation functions run on ScalarE:
// CHECK:       %e = nki.ndarray() : memref<128x64xbf16, #nisa.mem<sbuf>>
// CHECK:       nki.activation(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %e, data=memref<128x64xf32, #nisa.mem<sbuf>> %a, scale=f32 %{{.*}}, op=exp)
// sin is range-reduced first: t = (x + pi) mod 2pi, then sin(t - pi):
// CHECK:       %s = nki.ndarray() : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  %[[T:.*]] = nki.ndarray() : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  %[[PI:.*]] = arith.constant 3.14159274 : f32
// CHECK-NEXT:  %[[TWOPI:.*]] = arith.constant 6.28318548 : f32
// CHECK-NEXT:  nki.tensor_scalar(dst={{.*}} %[[T]], data={{.*}} %a, operand0=f32 %[[PI]], operand1=f32 %[[TWOPI]], op0=add, op1=mod)
// CHECK-NEXT:  %[[MPI:.*]] = arith.constant -3.14159274 : f32
// CHECK:       nki.activation(dst={{.*}} %s, data={{.*}} %[[T]], bias=f32 %[[MPI]], scale=f32 %{{.*}}, op=sin)
// floor = x - (x mod 1):
// CHECK:       nki.tensor_scalar(dst={{.*}} %[[F:fl_1]], data={{.*}} %a, operand0=f32 %{{.*}}, op0=mod)
// CHECK-NEXT:  nki.tensor_tensor(dst={{.*}} %fl, data1={{.*}} %a, data2={{.*}} %[[F]], op=subtract)
// rsqrt runs on GpSimd, which cannot read PSUM: the PSUM input is copied to SBUF first:
// CHECK:       nki.tensor_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %[[RS:.*]], src=memref<128x64xf32, #nisa.mem<psum>> %p)
// CHECK-NEXT:  %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  nki.tensor_scalar(dst={{.*}} %rs, data={{.*}} %[[RS]], operand0=f32 %[[Z]], op0=rsqrt) engine=gpsimd
// invert = xor with all ones:
// CHECK:       %[[M1:.*]] = arith.constant -1 : i32
// CHECK-NEXT:  nki.tensor_scalar(dst=memref<128x64xi32, #nisa.mem<sbuf>> %inv, data={{.*}} %i, operand0=i32 %[[M1]], op0=bitwise_xor)
// a scalar on the left: tensor_scalar with reverse0:
// CHECK:       nki.tensor_scalar(dst={{.*}} %sub, data={{.*}} %a, operand0=f32 %two, op0=subtract, reverse0=true)
// a [P,1] column operand: tensor_scalar (converted to float32, as its operands must be):
// CHECK:       nki.tensor_copy(dst=memref<128x1xf32, #nisa.mem<sbuf>> %[[C:.*]], src=memref<128x1xbf16, #nisa.mem<sbuf>> %col)
// CHECK-NEXT:  nki.tensor_scalar(dst={{.*}} %div, data={{.*}} %a, operand0=memref<128x1xf32, #nisa.mem<sbuf>> %[[C]], op0=divide)
// power (GpSimd by default) gets SBUF inputs:
// CHECK:       nki.tensor_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %[[PW:.*]], src=memref<128x64xf32, #nisa.mem<psum>> %p)
// CHECK-NEXT:  nki.tensor_tensor(dst={{.*}} %pw, data1={{.*}} %[[PW]], data2={{.*}} %a, op=power)
// partition broadcast [1,64] -> [128,64]: a ones[1,128] (set on GpSimd) x row matmul on
// TensorE, copied out of PSUM on ScalarE:
// CHECK:       %[[ONES:.*]] = nki.ndarray() : memref<1x128xf32, #nisa.mem<sbuf>>
// CHECK:       nki.memset(dst=memref<1x128xf32, #nisa.mem<sbuf>> %[[ONES]], value=f32 %{{.*}}) engine=gpsimd
// CHECK-NEXT:  %[[PS:.*]] = nki.ndarray() : memref<128x64xf32, #nisa.mem<psum>>
// CHECK-NEXT:  nki.nc_matmul(dst={{.*}} %[[PS]], stationary={{.*}} %[[ONES]], moving=memref<1x64xf32, #nisa.mem<sbuf>> %row)
// CHECK-NEXT:  %[[RB:.*]] = nki.ndarray() : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  %{{.*}} = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:  nki.activation(dst={{.*}} %[[RB]], data={{.*}} %[[PS]], scale=f32 %{{.*}}, op=copy)
// CHECK-NEXT:  nki.tensor_tensor(dst={{.*}} %gt, data1={{.*}} %[[RB]], data2={{.*}} %a, op=greater)
// a free-dim broadcast copies into each broadcast index:
// CHECK:       %[[B0:.*]] = memref.subview %bc[0, 0, 0] [16, 1, 8] [1, 1, 1]
// CHECK-NEXT:  nki.tensor_copy(dst={{.*}} %[[B0]], src=memref<16x1x8xf32, #nisa.mem<sbuf>> %c3)
// CHECK-NEXT:  %[[B1:.*]] = memref.subview %bc[0, 1, 0] [16, 1, 8] [1, 1, 1]
// CHECK-NEXT:  nki.tensor_copy(dst={{.*}} %[[B1]], src=memref<16x1x8xf32, #nisa.mem<sbuf>> %c3)
// reductions: tensor_reduce; mean scales a float32 sum by 1/N:
// CHECK:       nki.tensor_reduce(dst=memref<128x1xf32, #nisa.mem<sbuf>> %sum, data={{.*}} %a, op=add, axis=[1])
// CHECK:       nki.tensor_reduce(dst=memref<128x1xf32, #nisa.mem<sbuf>> %[[MS:.*]], data={{.*}} %a, op=add, axis=[1])
// CHECK-NEXT:  %[[INVN:.*]] = arith.constant 1.562500e-02 : f32
// CHECK-NEXT:  nki.tensor_scalar(dst=memref<128x1xbf16, #nisa.mem<sbuf>> %mean, data={{.*}} %[[MS]], operand0=f32 %[[INVN]], op0=multiply)
// softmax: max, exp(x - max) with its sum in one activation, reciprocal, scale:
// CHECK:       nki.tensor_reduce(dst={{.*}} %[[MX:.*]], data={{.*}} %a, op=maximum, axis=[1])
// CHECK:       nki.tensor_scalar(dst={{.*}} %[[NEG:.*]], data={{.*}} %[[MX]], operand0=f32 %{{.*}}, op0=multiply)
// CHECK:       nki.activation(dst={{.*}} %[[EX:.*]], data={{.*}} %a, bias=memref<128x1xf32, #nisa.mem<sbuf>> %[[NEG]], scale=f32 %{{.*}}, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %[[SUM:.*]], op=exp, reduce_op=add)
// CHECK:       nki.reciprocal(dst={{.*}} %[[RCP:.*]], data={{.*}} %[[SUM]])
// CHECK-NEXT:  nki.tensor_scalar(dst={{.*}} %sm, data={{.*}} %[[EX]], operand0={{.*}} %[[RCP]], op0=multiply)
// transpose: TensorE into the PSUM result:
// CHECK:       %t = nki.ndarray() : memref<64x128xf32, #nisa.mem<psum>>
// CHECK-NEXT:  nki.nc_transpose(dst=memref<64x128xf32, #nisa.mem<psum>> %t, data=memref<128x64xf32, #nisa.mem<sbuf>> %a)
// where: y, then a uint8 predicate, then a predicated copy of x:
// CHECK:       nki.memset(dst={{.*}} %w, value=f32 %{{.*}})
// CHECK:       nki.tensor_scalar(dst=memref<128x64xui8, #nisa.mem<sbuf>> %[[PRED:.*]], data={{.*}} %a, operand0=f32 %{{.*}}, op0=not_equal)
// CHECK-NEXT:  nki.tensor_copy_predicated(dst={{.*}} %w, src={{.*}} %a, predicate={{.*}} %[[PRED]])
// CHECK:       %f = nki.ndarray(name=twos) : memref<4x4xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  nki.memset(dst=memref<4x4xf32, #nisa.mem<sbuf>> %f, value=f32 %two)
// identity: iota(p - i) == 0:
// CHECK:       nki.iota(dst=memref<8x8xi32, #nisa.mem<sbuf>> %[[IO:.*]], pattern=[[-1, 8]], offset=0, channel_multiplier=1)
// CHECK:       nki.tensor_scalar(dst=memref<8x8xui8, #nisa.mem<sbuf>> %id, data={{.*}} %[[IO]], operand0=f32 %{{.*}}, op0=equal)
// rand: 32 random bits, keep the dtype's significand width (8 for bf16), scale into [0, 1):
// CHECK:       nki.rng(dst=memref<128x64xui32, #nisa.mem<sbuf>> %[[RAW:.*]])
// CHECK:       %[[SH:.*]] = arith.constant 24 : i32
// CHECK-NEXT:  nki.tensor_scalar(dst={{.*}} %[[TOP:.*]], data={{.*}} %[[RAW]], operand0=i32 %[[SH]], op0=right_shift)
// CHECK-NEXT:  %[[SC:.*]] = arith.constant 3.906250e-03 : f32
// CHECK-NEXT:  nki.tensor_scalar(dst=memref<128x64xbf16, #nisa.mem<sbuf>> %r, data={{.*}} %[[TOP]], operand0=f32 %[[SC]], op0=multiply)
// CHECK:       nki.set_rng_seed(src_seeds=memref<1x1xi32, #nisa.mem<sbuf>> %seed)
// CHECK:       nki.dropout(dst={{.*}} %d, data={{.*}} %a, prob=f32 %two)
// CHECK:       nki.nc_n_gather(dst=memref<128x8xf32, #nisa.mem<sbuf>> %g, data={{.*}} %a, indices={{.*}} %idx)
// CHECK-NOT:   nki.{{(unary|binary|reduce|softmax|transpose|broadcast_to|where|full|rand|random_seed|nl_dropout|gather_flattened|shared_identity_matrix)}}(
// CHECK:       func.return

// nl.broadcast_to of an fp32 row that fits one PSUM bank (<= 512 columns), read only as the
// second input of VectorE tensor_tensor ops: the multiply reads the TensorE result in PSUM
// (no copy); a wider row is copied out of PSUM into the SBUF result, 512 columns per matmul,
// and so is one read by anything else.
func.func @bcast_rows(%a: memref<128x512xf32, #nisa.mem<sbuf>>, %r: memref<1x512xf32, #nisa.mem<sbuf>>, %w: memref<128x1024xf32, #nisa.mem<sbuf>>, %rw: memref<1x1024xf32, #nisa.mem<sbuf>>, %o: memref<128x512xf32, #nisa.mem<sbuf>>, %ow: memref<128x1024xf32, #nisa.mem<sbuf>>) {
  %b = nki.broadcast_to(x=memref<1x512xf32, #nisa.mem<sbuf>> %r) : memref<128x512xf32, #nisa.mem<sbuf>>
  nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %o, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a, data2=memref<128x512xf32, #nisa.mem<sbuf>> %b, op=multiply)
  %bw = nki.broadcast_to(x=memref<1x1024xf32, #nisa.mem<sbuf>> %rw) : memref<128x1024xf32, #nisa.mem<sbuf>>
  nki.tensor_tensor(dst=memref<128x1024xf32, #nisa.mem<sbuf>> %ow, data1=memref<128x1024xf32, #nisa.mem<sbuf>> %w, data2=memref<128x1024xf32, #nisa.mem<sbuf>> %bw, op=multiply)
  %bd = nki.broadcast_to(x=memref<1x512xf32, #nisa.mem<sbuf>> %r) : memref<128x512xf32, #nisa.mem<sbuf>>
  nki.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %o, src=memref<128x512xf32, #nisa.mem<sbuf>> %bd)
  func.return
}

// CHECK-LABEL: func.func @bcast_rows
// CHECK:       nki.memset({{.*}}) engine=gpsimd
// CHECK-NEXT:  %[[P1:.*]] = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT:  nki.nc_matmul(dst={{.*}} %[[P1]], stationary={{.*}}, moving={{.*}} %r)
// CHECK-NEXT:  nki.tensor_tensor(dst={{.*}} %o, data1={{.*}} %a, data2=memref<128x512xf32, #nisa.mem<psum>> %[[P1]], op=multiply)
// CHECK:       %bw = nki.ndarray() : memref<128x1024xf32, #nisa.mem<sbuf>>
// CHECK:       nki.memset({{.*}}) engine=gpsimd
// CHECK:       %[[P2:.*]] = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT:  %[[R0:.*]] = memref.subview %rw[0, 0] [1, 512] [1, 1]
// CHECK-NEXT:  nki.nc_matmul(dst={{.*}} %[[P2]], stationary={{.*}}, moving={{.*}} %[[R0]])
// CHECK-NEXT:  %[[D0:.*]] = memref.subview %bw[0, 0] [128, 512] [1, 1]
// CHECK-NEXT:  arith.constant
// CHECK-NEXT:  nki.activation(dst={{.*}} %[[D0]], data={{.*}} %[[P2]], scale={{.*}}, op=copy)
// CHECK-NEXT:  %[[P3:.*]] = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT:  %[[R1:.*]] = memref.subview %rw[0, 512] [1, 512] [1, 1]
// CHECK-NEXT:  nki.nc_matmul(dst={{.*}} %[[P3]], stationary={{.*}}, moving={{.*}} %[[R1]])
// CHECK-NEXT:  %[[D1:.*]] = memref.subview %bw[0, 512] [128, 512] [1, 1]
// CHECK-NEXT:  arith.constant
// CHECK-NEXT:  nki.activation(dst={{.*}} %[[D1]], data={{.*}} %[[P3]], scale={{.*}}, op=copy)
// CHECK-NOT:   nki.tensor_copy(dst={{.*}} %bw
// CHECK:       nki.tensor_tensor(dst={{.*}} %ow, data1={{.*}} %w, data2=memref<128x1024xf32, #nisa.mem<sbuf>> %bw, op=multiply)
// CHECK:       %bd = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK:       nki.activation(dst={{.*}} %bd, data={{.*}}, op=copy)
// CHECK:       nki.tensor_copy(dst={{.*}} %o, src={{.*}} %bd)
