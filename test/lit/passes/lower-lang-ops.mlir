// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// RUN: %nki-opt %s -p lower-nki-to-nisa | %nki-opt | filecheck %s
// RUN: %nki-opt %s -p lower-nki-to-nisa --print-op-generic | %nki-opt | filecheck %s
// nl.shared_constant keeps its raw-bits dense value; nl.device_print becomes a DMA-queue op.

func.func @lang(%h: memref<2x2xf32, #nisa.mem<shared_hbm>>) {
  %k = nki.shared_constant(value=dense<[[16256, -16512]]> : tensor<1x2xi16>) : memref<1x2xbf16, #nisa.mem<shared_hbm>>
  %t = nki.ndarray() : memref<1x2xbf16, #nisa.mem<sbuf>>
  nki.dma_copy(dst=memref<1x2xbf16, #nisa.mem<sbuf>> %t, src=memref<1x2xbf16, #nisa.mem<shared_hbm>> %k)
  nki.device_print(tensor=memref<1x2xbf16, #nisa.mem<sbuf>> %t, prefix="k tile")
  nki.device_print(tensor=memref<2x2xf32, #nisa.mem<shared_hbm>> %h, prefix=h)
  func.return
}

// CHECK-LABEL: func.func @lang
// CHECK-NEXT:  %k = nisa.shared_constant(value=dense<[[16256, -16512]]> : tensor<1x2xi16>) : memref<1x2xbf16, #nisa.mem<shared_hbm>>
// CHECK:       nisa.dma_copy(dst=memref<1x2xbf16, #nisa.mem<sbuf>> %t, src=memref<1x2xbf16, #nisa.mem<shared_hbm>> %k
// CHECK-NEXT:  nisa.device_print(tensor=memref<1x2xbf16, #nisa.mem<sbuf>> %t, prefix="k tile") engine=dma
// CHECK-NEXT:  nisa.device_print(tensor=memref<2x2xf32, #nisa.mem<shared_hbm>> %h, prefix=h) engine=dma
