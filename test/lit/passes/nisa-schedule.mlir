// nisa-schedule: every instruction gets nkim.id (program pre-order, loop bodies
// included), nkim.queue (its engine; DMA loads alternate dma0/dma1, stores dma2/dma3) and
// nkim.deps (ids of instructions on other queues it waits for: RAW / WAR / WAW on memory
// that may overlap, nearest per queue; none for the same queue, which runs in order).
// These inputs are already in a good order: mode=list keeps it.
// RUN: %nki-opt %s --split-input-file -p nisa-schedule | filecheck %s

// Straight-line code.
// CHECK-LABEL: builtin.module attributes {nkim.schedule = "list"}
// CHECK-LABEL: func.func @straight
// dma a <- in; dma w <- wt (engine=sync is still the DMA queue)
// CHECK:         nisa.dma_copy{{.*}}engine=dma {nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = []}
// CHECK-NEXT:    nisa.dma_copy{{.*}}engine=sync {nkim.id = 1 : i64, nkim.queue = "dma1", nkim.deps = []}
// matmul p <- w, a: RAW on a (0) and w (1), loaded on two DMA queues
// CHECK:         nisa.matmul{{.*}}engine=tensor {nkim.id = 2 : i64, nkim.queue = "tensor", nkim.deps = [0 : i64, 1 : i64]}
// tensor_copy b <- p: RAW on p
// CHECK:         nisa.tensor_copy{{.*}}engine=vector {nkim.id = 3 : i64, nkim.queue = "vector", nkim.deps = [2 : i64]}
// activation b <- exp(b): RAW + WAW on b
// CHECK:         nisa.activation{{.*}}engine=scalar {nkim.id = 4 : i64, nkim.queue = "scalar", nkim.deps = [3 : i64]}
// dma out <- b: RAW on b from two queues; the activation (4) waited for the copy (3)
// CHECK:         nisa.dma_copy{{.*}}engine=dma {nkim.id = 5 : i64, nkim.queue = "dma2", nkim.deps = [4 : i64]}
// memset a (engine=unknown runs on vector): WAW with the DMA (0), WAR with the matmul (2),
// which waited for 0
// CHECK:         nisa.memset{{.*}}engine=unknown {nkim.id = 6 : i64, nkim.queue = "vector", nkim.deps = [2 : i64]}
// read-after-read is no dependence (w: 1 wrote it, 2 only read it); the same queue needs
// no edge (7 wrote w2); a view of a conflicts with a: RAW with its writers on the dma
// (0) and vector (6) queues; 6 waited for 0
// CHECK:         nisa.tensor_copy{{.*}}engine=gpsimd {nkim.id = 7 : i64, nkim.queue = "gpsimd", nkim.deps = [1 : i64]}
// CHECK:         nisa.tensor_copy{{.*}}engine=gpsimd {nkim.id = 8 : i64, nkim.queue = "gpsimd", nkim.deps = [6 : i64]}
func.func @straight(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>, %wt: memref<128x128xf32, #nisa.mem<shared_hbm>>, %out: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %a = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
  %w = nisa.alloc : memref<128x128xf32, #nisa.mem<sbuf>>
  %w2 = nisa.alloc : memref<128x128xf32, #nisa.mem<sbuf>>
  %p = nisa.alloc : memref<128x512xf32, #nisa.mem<psum>>
  %b = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
  nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
  nisa.dma_copy(dst=memref<128x128xf32, #nisa.mem<sbuf>> %w, src=memref<128x128xf32, #nisa.mem<shared_hbm>> %wt) engine=sync
  nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %w, moving=memref<128x512xf32, #nisa.mem<sbuf>> %a, is_transpose=false) engine=tensor
  nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<psum>> %p) engine=vector
  nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %b, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar
  nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x512xf32, #nisa.mem<sbuf>> %b) engine=dma
  nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, value=f32 %zero) engine=unknown
  nisa.tensor_copy(dst=memref<128x128xf32, #nisa.mem<sbuf>> %w2, src=memref<128x128xf32, #nisa.mem<sbuf>> %w) engine=gpsimd
  %as = memref.subview %a[0, 0] [128, 128] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x128xf32, strided<[512, 1]>, #nisa.mem<sbuf>>
  nisa.tensor_copy(dst=memref<128x128xf32, #nisa.mem<sbuf>> %w2, src=memref<128x128xf32, strided<[512, 1]>, #nisa.mem<sbuf>> %as) engine=gpsimd
  func.return
}

// -----

// Loops: ids number the loop body once; an instruction also waits for conflicting
// instructions later in the same loop body (they ran in the previous iteration: the
// buffers x and y are reused by every iteration, nkim.copies is 1 here) unless one
// before it on that queue in the same iteration already orders them.
// CHECK-LABEL: func.func @loop
// acc <- 0 before the loop
// CHECK:         nisa.memset{{.*}}{nkim.id = 0 : i64, nkim.queue = "vector", nkim.deps = []}
// CHECK:         scf.for
// dma x <- in[i]: WAR on x with the activation of the previous iteration (2)
// CHECK:           nisa.dma_copy{{.*}}{nkim.id = 1 : i64, nkim.queue = "dma0", nkim.deps = [2 : i64]}
// activation y <- exp(x): RAW on x (1); WAR on y with the add of the previous
// iteration (4) and with the previous iteration's DMA out, on its own store queue (3)
// CHECK:           nisa.activation{{.*}}{nkim.id = 2 : i64, nkim.queue = "scalar", nkim.deps = [1 : i64, 3 : i64, 4 : i64]}
// list scheduling starts the store (longer path: DMA) before the vector add
// dma out[i] <- y: RAW on y (2)
// CHECK:           nisa.dma_copy{{.*}}{nkim.id = 3 : i64, nkim.queue = "dma2", nkim.deps = [2 : i64]}
// acc += y: RAW on y (2), RAW/WAW on acc with the memset before the loop (0) is the same queue
// CHECK:           nisa.tensor_tensor_arith{{.*}}{nkim.id = 4 : i64, nkim.queue = "vector", nkim.deps = [2 : i64]}
// CHECK:         } {nki.range = "affine"}
// after the loop: dma out2 <- acc: RAW on acc (4; the memset 0 runs before it on vector)
// CHECK:         nisa.dma_copy{{.*}}{nkim.id = 5 : i64, nkim.queue = "dma3", nkim.deps = [4 : i64]}
module {
  func.func @loop(%in: memref<256x512xf32, #nisa.mem<shared_hbm>>, %out: memref<256x512xf32, #nisa.mem<shared_hbm>>, %out2: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %acc = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %acc, value=f32 %zero) engine=vector
    scf.for %i = %c0 to %c2 step %c1 {
      %x = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
      %y = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
      %row = arith.muli %i, %c128 : index
      %iv = memref.subview %in[%row, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>
      nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>> %iv) engine=dma
      nisa.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %y, src=memref<128x512xf32, #nisa.mem<sbuf>> %x, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar
      nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %acc, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %acc, rhs=memref<128x512xf32, #nisa.mem<sbuf>> %y, op=add) engine=vector
      %ov = memref.subview %out[%row, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>
      nisa.dma_copy(dst=memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x512xf32, #nisa.mem<sbuf>> %y) engine=dma
    } {nki.range = "affine"}
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %out2, src=memref<128x512xf32, #nisa.mem<sbuf>> %acc) engine=dma
    func.return
  }
}
