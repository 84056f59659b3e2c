builtin.module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @exp_rows(%x: memref<256x64xf32, #nisa.mem<shared_hbm>>) -> memref<256x64xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
    %out = nisa.alloc {nkim.name = "out"} : memref<256x64xf32, #nisa.mem<shared_hbm>>
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %c128 = arith.constant 128 : index
      %0 = arith.muli %i, %c128 : index
      %1 = memref.subview %x[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
      %t = nisa.alloc alignment=64 {nkim.name = "t"} : memref<128x64xf32, #nisa.mem<sbuf>>
      nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, src=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %1, oob_is_err=true) engine=dma
      %2 = memref.subview %out[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
      %3 = nisa.alloc alignment=64 : memref<128x64xf32, #nisa.mem<sbuf>>
      %4 = arith.constant 1.000000e+00 : f32
      %5 = arith.constant 0.000000e+00 : f32
      nisa.activation(dst=memref<128x64xf32, #nisa.mem<sbuf>> %3, src=memref<128x64xf32, #nisa.mem<sbuf>> %t, bias=f32 %5, scale=f32 %4, op=exp) engine=scalar
      nisa.dma_copy(dst=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %2, src=memref<128x64xf32, #nisa.mem<sbuf>> %3, oob_is_err=true) engine=dma
    } {nki.range = "affine"}
    func.return %out : memref<256x64xf32, #nisa.mem<shared_hbm>>
  }
}

