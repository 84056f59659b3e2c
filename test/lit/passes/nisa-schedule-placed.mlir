// nisa-schedule after nisa-allocate: two different tensors whose live ranges are
// disjoint may share bytes, and then the new tensor's writer must wait for the old
// tensor's last reader (WAR) and writer (WAW) on other queues.
// RUN: %nki-opt %s -p nisa-allocate,nisa-schedule | filecheck %s

// CHECK-LABEL: func.func @reuse
// CHECK:         %x = nisa.alloc alignment=64 {nkim.name = "x", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         nisa.dma_copy{{.*}} %x, {{.*}} {nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = []}
// (list scheduling emits an alloc just before its first user)
// CHECK:         %y = nisa.alloc alignment=64 {nkim.name = "y", nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
// CHECK:         nisa.tensor_copy{{.*}} {nkim.id = 1 : i64, nkim.queue = "vector", nkim.deps = [0 : i64]}
// z could take x's bytes (x is dead), which best fit does; nisa-allocate then places SBUF
// again coldest-fit below best fit's peak (6144): z takes the never-used [4096, 6144), so
// its memset waits for nothing
// CHECK:         %z = nisa.alloc alignment=64 {nkim.name = "z", nkim.partition = 0 : i64, nkim.offset = 4096 : i64}
// CHECK:         nisa.memset{{.*}} %z, {{.*}} {nkim.id = 2 : i64, nkim.queue = "gpsimd", nkim.deps = []}
// list scheduling starts the two stores (DMA) before the memset of u, which nothing needs
// CHECK:         nisa.dma_copy{{.*}} {nkim.id = 3 : i64, nkim.queue = "dma2", nkim.deps = [1 : i64]}
// out2 <- z: RAW on z (2)
// CHECK:         nisa.dma_copy{{.*}} {nkim.id = 4 : i64, nkim.queue = "dma3", nkim.deps = [2 : i64]}
// u, live with y and z, has only x's bytes left: its memset waits for x's last reader (1,
// WAR); x's DMA (0, WAW) is implied: 1 waited for it
// CHECK:         %u = nisa.alloc alignment=64 {nkim.name = "u", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         nisa.memset{{.*}} %u, {{.*}} {nkim.id = 5 : i64, nkim.queue = "gpsimd", nkim.deps = [1 : i64]}
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @reuse(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>, %out: memref<128x512xf32, #nisa.mem<shared_hbm>>, %out2: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
    %zero = arith.constant 0.0 : f32
    %x = nisa.alloc {nkim.name = "x"} : memref<128x512xf32, #nisa.mem<sbuf>>
    %y = nisa.alloc {nkim.name = "y"} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %y, src=memref<128x512xf32, #nisa.mem<sbuf>> %x) engine=vector
    %z = nisa.alloc {nkim.name = "z"} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %z, value=f32 %zero) engine=gpsimd
    %u = nisa.alloc {nkim.name = "u"} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=gpsimd
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x512xf32, #nisa.mem<sbuf>> %y) engine=dma
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %out2, src=memref<128x512xf32, #nisa.mem<sbuf>> %z) engine=dma
    nisa.release %u : memref<128x512xf32, #nisa.mem<sbuf>>
    func.return
  }
}
