builtin.module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @exp_rows(%x: memref<256x64xf32, #nisa.mem<shared_hbm>>) -> memref<256x64xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
    %out = nki.ndarray(name=out) : memref<256x64xf32, #nisa.mem<shared_hbm>>
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %c128 = arith.constant 128 : index
      %0 = arith.muli %i, %c128 : index
      %1 = memref.subview %x[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
      %t = nki.load(src=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %1) : memref<128x64xf32, #nisa.mem<sbuf>>
      %2 = memref.subview %out[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
      %3 = nki.unary(x=memref<128x64xf32, #nisa.mem<sbuf>> %t, fn=exp) : memref<128x64xf32, #nisa.mem<sbuf>>
      nki.store(dst=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %2, value=memref<128x64xf32, #nisa.mem<sbuf>> %3)
    } {nki.range = "affine"}
    func.return %out : memref<256x64xf32, #nisa.mem<shared_hbm>>
  }
}
