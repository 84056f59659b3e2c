// lower-nki-to-nisa on the LNC2 cross-core instructions: nki.sendrecv -> nisa.sendrecv on
// the dma engine (ranks, pipe_id and dma_engine kept), nki.core_barrier -> nisa.core_barrier
// on gpsimd unless the user picked an engine.  nisa-schedule then orders the barrier after
// the DMA writing the shared tensor it synchronises on (a cross-queue edge); the DMA reading
// the received tile follows the sendrecv that wrote it on the same dma queue (no edge needed).
// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// RUN: %nki-opt %s -p lower-nki-to-nisa,nisa-allocate,nisa-schedule | filecheck %s --check-prefix=SCHED

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @exchange(%x: memref<128x64xf32, #nisa.mem<shared_hbm>>, %out: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
    %t = nki.ndarray(name=t) : memref<128x64xf32, #nisa.mem<sbuf>>
    %r = nki.ndarray(name=r) : memref<128x64xf32, #nisa.mem<sbuf>>
    nki.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, src=memref<128x64xf32, #nisa.mem<shared_hbm>> %x)
    nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %t, dst=memref<128x64xf32, #nisa.mem<sbuf>> %r, send_to_rank=1, recv_from_rank=1, pipe_id=0)
    nki.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %r)
    nki.core_barrier(data=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1])
    nki.core_barrier(data=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=scalar
    func.return
  }
}

// CHECK-LABEL: func.func @exchange
// CHECK:         nisa.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %t, dst=memref<128x64xf32, #nisa.mem<sbuf>> %r, send_to_rank=1, recv_from_rank=1, pipe_id=0) engine=dma
// CHECK:         nisa.core_barrier(data=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=gpsimd
// CHECK-NEXT:    nisa.core_barrier(data=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=scalar
// CHECK-NOT:     nki.

// sendrecv and core_barrier are fences (nkim.fence): they wait for everything before them
// and everything after them waits for them, so they need no other edge.
// SCHED:      nisa.dma_copy({{.*}}%t{{.*}}) engine=dma {nkim.id = 0 : i64, nkim.queue = "dma0", nkim.deps = []}
// SCHED:      nisa.sendrecv({{.*}}) engine=dma {nkim.id = 1 : i64, nkim.queue = "dma", nkim.deps = [], nkim.fence}
// SCHED-NEXT: nisa.dma_copy({{.*}}%out{{.*}}) engine=dma {nkim.id = 2 : i64, nkim.queue = "dma2", nkim.deps = []}
// SCHED-NEXT: nisa.core_barrier({{.*}}) engine=gpsimd {nkim.id = 3 : i64, nkim.queue = "gpsimd", nkim.deps = [], nkim.fence}
// SCHED-NEXT: nisa.core_barrier({{.*}}) engine=scalar {nkim.id = 4 : i64, nkim.queue = "scalar", nkim.deps = [], nkim.fence}
