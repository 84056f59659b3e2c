// deps @exp_rows:
//   %0 dma_copy (?) -> %1 activation (?)  RAW src  [same iteration]
//   %1 activation (?) -> %2 dma_copy (?)  RAW src  [same iteration]
builtin.module attributes {nisa.target = #nisa.target<trn2>, nkim.sbuf_peak_bytes = 1024 : i64, nkim.psum_peak_bytes = 0 : i64, nkim.sbuf_max_live_bytes = 1024 : i64, nkim.sbuf_partition_peak_bytes = [[0 : i64, 127 : i64, 1024 : i64]], nkim.sbuf_fragmentation = 0.000000e+00 : f64, nkim.psum_max_live_bytes = 0 : i64, nkim.psum_partition_peak_bytes = [[0 : i64, 127 : i64, 0 : i64]], nkim.psum_fragmentation = 0.000000e+00 : f64, nkim.psum_banks_used = 0 : i64, nkim.rotating_tensors = 2 : i64, nkim.schedule = "list"} {
  func.func @exp_rows(%x: memref<256x64xf32, #nisa.mem<shared_hbm>>) -> memref<256x64xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
    %out = nisa.alloc {nkim.name = "out"} : memref<256x64xf32, #nisa.mem<shared_hbm>>
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %c128 = arith.constant 128 : index
      %0 = arith.muli %i, %c128 : index
      %1 = memref.subview %x[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
      %t = nisa.alloc copy(%i) alignment=64 {nkim.name = "t", nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 256 : i64} : memref<128x64xf32, #nisa.mem<sbuf>>
      nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, src=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %1, oob_is_err=true) engine=dma {nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = []}
      %2 = nisa.alloc copy(%i) alignment=64 {nkim.partition = 0 : i64, nkim.offset = 512 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 256 : i64} : memref<128x64xf32, #nisa.mem<sbuf>>
      %3 = arith.constant 1.000000e+00 : f32
      %4 = arith.constant 0.000000e+00 : f32
      nisa.activation(dst=memref<128x64xf32, #nisa.mem<sbuf>> %2, src=memref<128x64xf32, #nisa.mem<sbuf>> %t, bias=f32 %4, scale=f32 %3, op=exp) engine=scalar {nkim.id = 1 : i64, nkim.queue = "scalar", nkim.deps = [0 : i64]}
      %5 = memref.subview %out[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
      nisa.dma_copy(dst=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %5, src=memref<128x64xf32, #nisa.mem<sbuf>> %2, oob_is_err=true) engine=dma {nkim.id = 2 : i64, nkim.queue = "dma2", nkim.deps = [1 : i64]}
    } {nki.range = "affine"}
    func.return %out : memref<256x64xf32, #nisa.mem<shared_hbm>>
  }
}

