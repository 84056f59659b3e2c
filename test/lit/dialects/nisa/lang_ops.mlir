// nisa.shared_constant (raw bits of a baked constant) and nisa.device_print, round-tripped
// custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s

func.func @lang(%h: memref<2x2xf32, #nisa.mem<shared_hbm>>) {
  %k = nisa.shared_constant(value=dense<[[16256, -16512]]> : tensor<1x2xi16>) : memref<1x2xbf16, #nisa.mem<shared_hbm>>
  %i = nisa.shared_constant(value=dense<[1, -2, 3]> : tensor<3xi32>) {nkim.name = "c"} : memref<3xi32, #nisa.mem<shared_hbm>>
  nisa.device_print(tensor=memref<1x2xbf16, #nisa.mem<shared_hbm>> %k, prefix="k tile") engine=dma
  nisa.device_print(tensor=memref<2x2xf32, #nisa.mem<shared_hbm>> %h, prefix=h) engine=dma
  func.return
}

// CHECK-LABEL: func.func @lang
// CHECK-NEXT:  %k = nisa.shared_constant(value=dense<[[16256, -16512]]> : tensor<1x2xi16>) : memref<1x2xbf16, #nisa.mem<shared_hbm>>
// CHECK-NEXT:  %i = nisa.shared_constant(value=dense<[1, -2, 3]> : tensor<3xi32>) {nkim.name = "c"} : memref<3xi32, #nisa.mem<shared_hbm>>
// CHECK-NEXT:  nisa.device_print(tensor=memref<1x2xbf16, #nisa.mem<shared_hbm>> %k, prefix="k tile") engine=dma
// CHECK-NEXT:  nisa.device_print(tensor=memref<2x2xf32, #nisa.mem<shared_hbm>> %h, prefix=h) engine=dma
