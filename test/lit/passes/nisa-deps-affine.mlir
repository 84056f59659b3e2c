// Dependence analysis (--print-deps): no false loop-carried dependency in an affine_range
// body.  The tiles x and y are allocated in the body (a fresh tensor per iteration), and
// iteration i writes out[i*128:(i+1)*128], which no other iteration touches: the only
// carried edges are the "copies" resource edges of x and y (2 rotating copies: distance 2).
// RUN: %nki-opt %s -p nisa-schedule --print-deps | filecheck %s

// CHECK-LABEL: // deps @tiles:
// CHECK-NEXT:  %0 dma_copy (k.py:4) -> %0 dma_copy (k.py:4)  WAW dst  [carried at loop k.py:2 distance 2]  (copies)
// CHECK-NEXT:  %1 activation (k.py:5) -> %0 dma_copy (k.py:4)  WAR dst  [carried at loop k.py:2 distance 2]  (copies)
// CHECK-NEXT:  %0 dma_copy (k.py:4) -> %1 activation (k.py:5)  RAW src  [same iteration]
// CHECK-NOT:   -> %1 activation {{.*}}carried{{.*}}distance 1
// CHECK:       %1 activation (k.py:5) -> %2 dma_copy (k.py:6)  RAW src  [same iteration]
// no edge between two iterations' stores into out:
// CHECK-NOT:   %2 dma_copy (k.py:6) -> %2 dma_copy (k.py:6)
// CHECK-NOT:   distance 1
// The schedule waits for the iteration two back only (deps_carried), never for the previous one:
// CHECK:       nisa.dma_copy{{.*}}{nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = [], nkim.deps_carried = {{\[}}[1 : i64, 0 : i64, 2 : i64]]}
// CHECK:       nisa.activation{{.*}}{nkim.id = 1 : i64, nkim.queue = "scalar", nkim.deps = [0 : i64], nkim.deps_carried = {{\[}}[2 : i64, 0 : i64, 2 : i64]]}
// CHECK:       nisa.dma_copy{{.*}}{nkim.id = 2 : i64, nkim.queue = "dma2", nkim.deps = [1 : i64]}
func.func @tiles(%in: memref<512x256xf32, #nisa.mem<shared_hbm>>, %out: memref<512x256xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %r = arith.muli %i, %c128 : index
    %x = nisa.alloc copy(%i) {nkim.copies = 2 : i64, nkim.copy_stride = 1024 : i64} : memref<128x256xf32, #nisa.mem<sbuf>> loc("k.py":3:5)
    %y = nisa.alloc copy(%i) {nkim.copies = 2 : i64, nkim.copy_stride = 1024 : i64} : memref<128x256xf32, #nisa.mem<sbuf>> loc("k.py":3:5)
    %iv = memref.subview %in[%r, 0] [128, 256] [1, 1] : memref<512x256xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x256xf32, #nisa.mem<sbuf>> %x, src=memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>> %iv) engine=dma loc("k.py":4:5)
    nisa.activation(dst=memref<128x256xf32, #nisa.mem<sbuf>> %y, src=memref<128x256xf32, #nisa.mem<sbuf>> %x, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar loc("k.py":5:5)
    %ov = memref.subview %out[%r, 0] [128, 256] [1, 1] : memref<512x256xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x256xf32, #nisa.mem<sbuf>> %y) engine=dma loc("k.py":6:5)
  } {nki.range = "affine"} loc("k.py":2:3)
  func.return
}
