// The generic nl.* sugar ops (dialects/nki_sugar.py) and the language ops
// nki.shared_constant / nki.device_print (dialects/lang_ops.py), round-tripped custom -> custom
// and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @sugar(%a: memref<128x64xf32, #nisa.mem<sbuf>>, %col: memref<128x1xf32, #nisa.mem<sbuf>>, %w: memref<1x64xf32, #nisa.mem<sbuf>>, %c3: memref<16x1x8xf32, #nisa.mem<sbuf>>, %seed: memref<1x1xi32, #nisa.mem<sbuf>>, %idx: memref<128x8xui32, #nisa.mem<sbuf>>, %h: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
    %two = arith.constant 2.0 : f32
    %i3 = arith.constant 3 : i32
    %e = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=gelu_apprx_sigmoid_dx) : memref<128x64xbf16, #nisa.mem<sbuf>>
    %x = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=copy) : memref<128x64x1xf32, #nisa.mem<sbuf>>
    %b = nki.binary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, y=memref<128x1xf32, #nisa.mem<sbuf>> %col, fn=mod) : memref<128x64xf32, #nisa.mem<sbuf>>
    %s = nki.binary(x=f32 %two, y=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=greater_equal) : memref<128x64xf32, #nisa.mem<sbuf>>
    %r = nki.reduce(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=var, axis=[1]) : memref<128x1xf32, #nisa.mem<sbuf>>
    %t = nki.transpose(x=memref<128x64xf32, #nisa.mem<sbuf>> %a) : memref<64x128xf32, #nisa.mem<psum>>
    %bc = nki.broadcast_to(x=memref<16x1x8xf32, #nisa.mem<sbuf>> %c3) : memref<16x4x8xf32, #nisa.mem<sbuf>>
    %sm = nki.softmax(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, axis=[1]) : memref<128x64xf32, #nisa.mem<sbuf>>
    %rn = nki.rms_norm(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, w=memref<1x64xf32, #nisa.mem<sbuf>> %w, axis=[1], n=64, epsilon=1.0e-06) : memref<128x64xf32, #nisa.mem<sbuf>>
    %wh = nki.where(cond=memref<128x64xf32, #nisa.mem<sbuf>> %a, x=f32 %two, y=memref<128x64xf32, #nisa.mem<sbuf>> %a) : memref<128x64xf32, #nisa.mem<sbuf>>
    %f = nki.full(value=i32 %i3, name=threes) : memref<4x4xi32, #nisa.mem<sbuf>>
    %id = nki.shared_identity_matrix() : memref<8x8xui8, #nisa.mem<sbuf>>
    %rd = nki.rand() : memref<128x64xf32, #nisa.mem<sbuf>>
    nki.random_seed(seed=memref<1x1xi32, #nisa.mem<sbuf>> %seed)
    %d = nki.nl_dropout(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, rate=memref<128x1xf32, #nisa.mem<sbuf>> %col) : memref<128x64xf32, #nisa.mem<sbuf>>
    %g = nki.gather_flattened(data=memref<128x64xf32, #nisa.mem<sbuf>> %a, indices=memref<128x8xui32, #nisa.mem<sbuf>> %idx) : memref<128x8xf32, #nisa.mem<sbuf>>
    %k = nki.shared_constant(value=dense<[[16256, -16512]]> : tensor<1x2xi16>) : memref<1x2xbf16, #nisa.mem<shared_hbm>>
    nki.device_print(tensor=memref<128x64xf32, #nisa.mem<sbuf>> %a, prefix="my tile")
    nki.device_print(tensor=memref<128x64xf32, #nisa.mem<shared_hbm>> %h, prefix=out) engine=dma
    func.return
  }
}

// CHECK: builtin.module attributes {nisa.target = #nisa.target<trn2>} {
// CHECK-NEXT: func.func @sugar(%a: memref<128x64xf32, #nisa.mem<sbuf>>, %col: memref<128x1xf32, #nisa.mem<sbuf>>, %w: memref<1x64xf32, #nisa.mem<sbuf>>, %c3: memref<16x1x8xf32, #nisa.mem<sbuf>>, %seed: memref<1x1xi32, #nisa.mem<sbuf>>, %idx: memref<128x8xui32, #nisa.mem<sbuf>>, %h: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
// CHECK-NEXT: %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %i3 = arith.constant 3 : i32
// CHECK-NEXT: %e = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=gelu_apprx_sigmoid_dx) : memref<128x64xbf16, #nisa.mem<sbuf>>
// CHECK-NEXT: %x = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=copy) : memref<128x64x1xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %b = nki.binary(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, y=memref<128x1xf32, #nisa.mem<sbuf>> %col, fn=mod) : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %s = nki.binary(x=f32 %two, y=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=greater_equal) : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %r = nki.reduce(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, fn=var, axis=[1]) : memref<128x1xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %t = nki.transpose(x=memref<128x64xf32, #nisa.mem<sbuf>> %a) : memref<64x128xf32, #nisa.mem<psum>>
// CHECK-NEXT: %bc = nki.broadcast_to(x=memref<16x1x8xf32, #nisa.mem<sbuf>> %c3) : memref<16x4x8xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %sm = nki.softmax(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, axis=[1]) : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %rn = nki.rms_norm(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, w=memref<1x64xf32, #nisa.mem<sbuf>> %w, axis=[1], n=64, epsilon=1.0e-06) : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %wh = nki.where(cond=memref<128x64xf32, #nisa.mem<sbuf>> %a, x=f32 %two, y=memref<128x64xf32, #nisa.mem<sbuf>> %a) : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %f = nki.full(value=i32 %i3, name=threes) : memref<4x4xi32, #nisa.mem<sbuf>>
// CHECK-NEXT: %id = nki.shared_identity_matrix() : memref<8x8xui8, #nisa.mem<sbuf>>
// CHECK-NEXT: %rd = nki.rand() : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: nki.random_seed(seed=memref<1x1xi32, #nisa.mem<sbuf>> %seed)
// CHECK-NEXT: %d = nki.nl_dropout(x=memref<128x64xf32, #nisa.mem<sbuf>> %a, rate=memref<128x1xf32, #nisa.mem<sbuf>> %col) : memref<128x64xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %g = nki.gather_flattened(data=memref<128x64xf32, #nisa.mem<sbuf>> %a, indices=memref<128x8xui32, #nisa.mem<sbuf>> %idx) : memref<128x8xf32, #nisa.mem<sbuf>>
// CHECK-NEXT: %k = nki.shared_constant(value=dense<[[16256, -16512]]> : tensor<1x2xi16>) : memref<1x2xbf16, #nisa.mem<shared_hbm>>
// CHECK-NEXT: nki.device_print(tensor=memref<128x64xf32, #nisa.mem<sbuf>> %a, prefix="my tile")
// CHECK-NEXT: nki.device_print(tensor=memref<128x64xf32, #nisa.mem<shared_hbm>> %h, prefix=out) engine=dma
// CHECK-NEXT: func.return
// CHECK-NEXT: }
// CHECK-NEXT: }

// GENERIC: "nki.unary"(%a) <{fn = "gelu_apprx_sigmoid_dx"}>
// GENERIC: "nki.rms_norm"(%a, %w) <{axis = [1 : i64], n = 64 : i64, epsilon = 1.000000e-06 : f64}>
// GENERIC: "nki.shared_constant"() <{value = dense<[[16256, -16512]]> : tensor<1x2xi16>}>
// GENERIC: "nki.device_print"(%h) <{prefix = "out", engine = "dma"}>
