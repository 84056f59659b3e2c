// lower-nki-to-nisa on registers and runtime loops: every nki.register_* becomes its
// nisa twin on the sync engine; dynamic scf.for / scf.while and the no_reorder markers
// are kept.  Then nisa-allocate never places registers, keeps a buffer made in a runtime
// loop body live only inside the body, and keeps a buffer read in the scf.while condition
// live over the whole loop; nisa-schedule orders register writes before the reads of loop
// bounds and chains the instructions of a no_reorder span across queues.
// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// RUN: %nki-opt %s -p lower-nki-to-nisa,nisa-allocate,nisa-schedule | filecheck %s --check-prefix=SCHED

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @control(%cnt: memref<1x1xi32, #nisa.mem<shared_hbm>>, %x: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
    %c7 = arith.constant 7 : i32
    %f0 = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = nki.register_alloc(x=5) : memref<1xi32, #nisa.mem<reg>>
    %q = nki.register_alloc() : memref<1xi32, #nisa.mem<reg>>
    nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7)
    nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt)
    %flag = nki.ndarray(name=flag) : memref<1x1xi32, #nisa.mem<sbuf>>
    nki.dma_copy(dst=memref<1x1xi32, #nisa.mem<sbuf>> %flag, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt)
    %n = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) : index
    scf.for %i = %c0 to %n step %c1 {
      %body = nki.ndarray(name=body) : memref<128x64xf32, #nisa.mem<sbuf>>
      nki.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %body, src=memref<128x64xf32, #nisa.mem<shared_hbm>> %x)
      nki.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %flag, src=index %i)
    } {nki.range = "dynamic"}
    %after = nki.ndarray(name=after) : memref<128x64xf32, #nisa.mem<sbuf>>
    scf.while () : () -> () {
      nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %q, src=memref<1x1xi32, #nisa.mem<sbuf>> %flag)
      %v = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %q) : index
      %b = arith.cmpi ne, %v, %c0 : index
      scf.condition(%b)
    } do {
      %w = nki.ndarray(name=w) : memref<128x64xf32, #nisa.mem<sbuf>>
      nki.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %w, value=f32 %f0)
      nki.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7)
      nki.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %flag, src=memref<1xi32, #nisa.mem<reg>> %r)
      scf.yield
    } attributes {nki.range = "dynamic"}
    nisa.no_reorder_begin
    nki.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %after, src=memref<128x64xf32, #nisa.mem<shared_hbm>> %x)
    nki.memset(dst=memref<1x1xi32, #nisa.mem<sbuf>> %flag, value=i32 %c7)
    nisa.no_reorder_end
    func.return
  }
}

// CHECK-LABEL: func.func @control
// CHECK:         %r = nisa.register_alloc(x=5) engine=sync : memref<1xi32, #nisa.mem<reg>>
// CHECK-NEXT:    %q = nisa.register_alloc() engine=sync : memref<1xi32, #nisa.mem<reg>>
// CHECK-NEXT:    nisa.register_move(dst=memref<1xi32, #nisa.mem<reg>> %q, src=i32 %c7) engine=sync
// CHECK-NEXT:    nisa.register_load(dst=memref<1xi32, #nisa.mem<reg>> %r, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %cnt) engine=sync
// CHECK:         %n = nisa.register_read(src=memref<1xi32, #nisa.mem<reg>> %r) engine=sync : index
// CHECK-NEXT:    scf.for %i = %c0 to %n step %c1 {
// CHECK:           nisa.register_store(dst=memref<1x1xi32, #nisa.mem<sbuf>> %flag, src=index %i) engine=sync
// CHECK-NEXT:    } {nki.range = "dynamic"}
// CHECK:         scf.while () : () -> () {
// CHECK-NEXT:      nisa.register_load({{.*}}) engine=sync
// CHECK-NEXT:      %v = nisa.register_read({{.*}}) engine=sync : index
// CHECK:         } do {
// CHECK:           nisa.register_move({{.*}}) engine=sync
// CHECK-NEXT:      nisa.register_store({{.*}}) engine=sync
// CHECK:         } attributes {nki.range = "dynamic"}
// CHECK-NEXT:    nisa.no_reorder_begin
// CHECK-NEXT:    nisa.dma_copy
// CHECK-NEXT:    nisa.memset
// CHECK-NEXT:    nisa.no_reorder_end
// CHECK-NOT:     nki.

// registers are not placed; flag (used in the while condition) keeps its place over the loop
// SCHED:         %r = nisa.register_alloc(x=5) engine=sync {nkim.id = 0 : i64, nkim.queue = "sync", nkim.deps = []}
// SCHED:         %flag = nisa.alloc alignment=64 {nkim.name = "flag", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// the DMA into flag (4) must finish before the register_store into flag (id 7, WAW)
// SCHED:         %n = nisa.register_read{{.*}}{nkim.id = 5 : i64, nkim.queue = "sync", nkim.deps = []}
// SCHED:         %body = nisa.alloc alignment=64 {nkim.name = "body", nkim.partition = 0 : i64, nkim.offset = 64 : i64}
// SCHED:         nisa.register_store{{.*}}{nkim.id = 7 : i64, nkim.queue = "sync", nkim.deps = [4 : i64]}
// body is dead after the dynamic loop: w (while body) reuses its bytes; after, sunk to its
// first use behind the while loop, reuses them too
// SCHED:         %w = nisa.alloc alignment=64 {nkim.name = "w", nkim.partition = 0 : i64, nkim.offset = 64 : i64}
// SCHED:         %after = nisa.alloc alignment=64 {nkim.name = "after", nkim.partition = 0 : i64, nkim.offset = 64 : i64}
// in the no_reorder span the memset (vector) also waits for the dma before it (13: no data
// shared, an ordering edge); 7, 8 and 12 (sync queue, in loops that may run zero times)
// touched flag, 4 (dma0) is ordered by 13.  The dma into after waits for the dma into body
// (6, queue dma1) and the memset of w (11, vector): they share bytes.
// SCHED:         nisa.dma_copy{{.*}}{nkim.id = 13 : i64, nkim.queue = "dma0", nkim.deps = [6 : i64, 11 : i64]}
// SCHED-NEXT:    nisa.memset{{.*}}{nkim.id = 14 : i64, nkim.queue = "vector", nkim.deps = [7 : i64, 8 : i64, 12 : i64, 13 : i64]}
