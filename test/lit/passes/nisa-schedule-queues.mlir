// nisa-schedule DMA queues and modes.  Loads (HBM -> SBUF) alternate on dma0/dma1, stores
// (-> HBM) on dma2/dma3, in the original program order.  mode=list (default) moves the
// second load of the body before the compute on the first one, so both loads run in
// parallel; mode=in-order keeps the order and serialises everything: every instruction
// also waits for the instructions that may run right before it (the last one of the
// previous iteration for the first instruction of the body).
// RUN: %nki-opt %s -p nisa-schedule | filecheck %s --check-prefix=LIST
// RUN: %nki-opt %s -p 'nisa-schedule{mode=in-order}' | filecheck %s --check-prefix=INORDER

// LIST:      builtin.module attributes {nkim.schedule = "list"}
// LIST:      scf.for
// a waits for the previous iteration's add (3), which itself waited for the exp (2)
// LIST:        nisa.dma_copy{{.*}} %a, {{.*}}{nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = [3 : i64]}
// LIST:        nisa.dma_copy{{.*}} %b, {{.*}}{nkim.id = 1 : i64, nkim.queue = "dma1", nkim.deps = [4 : i64]}
// LIST:        nisa.activation{{.*}}{nkim.id = 2 : i64, nkim.queue = "scalar", nkim.deps = [0 : i64]}
// LIST:        nisa.tensor_tensor_arith{{.*}}{nkim.id = 3 : i64, nkim.queue = "vector", nkim.deps = [1 : i64, 2 : i64]}
// LIST:        nisa.dma_copy{{.*}}{nkim.id = 4 : i64, nkim.queue = "dma2", nkim.deps = [3 : i64]}

// INORDER:   builtin.module attributes {nkim.schedule = "in-order"}
// INORDER:     nisa.dma_copy{{.*}} %a, {{.*}}{nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = [4 : i64]}
// INORDER:     nisa.activation{{.*}}{nkim.id = 1 : i64, nkim.queue = "scalar", nkim.deps = [0 : i64]}
// INORDER:     nisa.dma_copy{{.*}} %b, {{.*}}{nkim.id = 2 : i64, nkim.queue = "dma1", nkim.deps = [1 : i64, 4 : i64]}
// INORDER:     nisa.tensor_tensor_arith{{.*}}{nkim.id = 3 : i64, nkim.queue = "vector", nkim.deps = [2 : i64]}
// INORDER:     nisa.dma_copy{{.*}}{nkim.id = 4 : i64, nkim.queue = "dma2", nkim.deps = [3 : i64]}
func.func @two_loads(%x: memref<512x256xf32, #nisa.mem<shared_hbm>>, %y: memref<512x256xf32, #nisa.mem<shared_hbm>>, %out: memref<512x256xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %r = arith.muli %i, %c128 : index
    %a = nisa.alloc : memref<128x256xf32, #nisa.mem<sbuf>>
    %xv = memref.subview %x[%r, 0] [128, 256] [1, 1] : memref<512x256xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x256xf32, #nisa.mem<sbuf>> %a, src=memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>> %xv) engine=dma
    nisa.activation(dst=memref<128x256xf32, #nisa.mem<sbuf>> %a, src=memref<128x256xf32, #nisa.mem<sbuf>> %a, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar
    %b = nisa.alloc : memref<128x256xf32, #nisa.mem<sbuf>>
    %yv = memref.subview %y[%r, 0] [128, 256] [1, 1] : memref<512x256xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x256xf32, #nisa.mem<sbuf>> %b, src=memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>> %yv) engine=dma
    nisa.tensor_tensor_arith(dst=memref<128x256xf32, #nisa.mem<sbuf>> %b, lhs=memref<128x256xf32, #nisa.mem<sbuf>> %a, rhs=memref<128x256xf32, #nisa.mem<sbuf>> %b, op=add) engine=vector
    %ov = memref.subview %out[%r, 0] [128, 256] [1, 1] : memref<512x256xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x256xf32, #nisa.mem<sbuf>> %b) engine=dma
  } {nki.range = "affine"}
  func.return
}
