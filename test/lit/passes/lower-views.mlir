// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s
// RUN: %nki-opt %s -p lower-nki-to-nisa,nisa-allocate,nisa-schedule | filecheck %s --check-prefix=SCHED
// Views survive lowering: memref.reinterpret_cast is kept, nki.view_dtype becomes
// nisa.view_dtype; nki.dma_copy_indirect becomes AWS's nisa.dma_copy_indirect on the dma
// engine with oob_mode -> oob_is_err.  nisa-allocate / nisa-schedule see through the views
// (effects.py VIEW_OPS): the tile read through a reinterpret_cast and a view_dtype stays
// live until that read, and the reads depend on the DMA that wrote the tile.

func.func @views(%table: memref<500x64xf32, #nisa.mem<shared_hbm>>, %idx: memref<128x1xi32, #nisa.mem<shared_hbm>>, %o: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  %ix = nki.ndarray(name="ix") : memref<128x1xi32, #nisa.mem<sbuf>>
  nki.dma_copy(dst=memref<128x1xi32, #nisa.mem<sbuf>> %ix, src=memref<128x1xi32, #nisa.mem<shared_hbm>> %idx)
  %g = nki.ndarray(name="g") : memref<128x64xf32, #nisa.mem<sbuf>>
  nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %table, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix, oob_mode=skip)
  %p = memref.reinterpret_cast %g to offset: [0], sizes: [128, 8, 8], strides: [64, 1, 8] : memref<128x64xf32, #nisa.mem<sbuf>> to memref<128x8x8xf32, strided<[64, 1, 8]>, #nisa.mem<sbuf>>
  %y = nki.ndarray(name="y") : memref<128x8x8xf32, #nisa.mem<sbuf>>
  nki.tensor_copy(dst=memref<128x8x8xf32, #nisa.mem<sbuf>> %y, src=memref<128x8x8xf32, strided<[64, 1, 8]>, #nisa.mem<sbuf>> %p)
  %v = nki.view_dtype(source=memref<128x64xf32, #nisa.mem<sbuf>> %g) : memref<128x64xi32, #nisa.mem<sbuf>>
  %z = nki.ndarray(name="z") : memref<128x64xi32, #nisa.mem<sbuf>>
  nki.tensor_copy(dst=memref<128x64xi32, #nisa.mem<sbuf>> %z, src=memref<128x64xi32, #nisa.mem<sbuf>> %v) engine=gpsimd
  nki.dma_copy_indirect(dst=memref<500x64xf32, #nisa.mem<shared_hbm>> %table, src=memref<128x64xf32, #nisa.mem<sbuf>> %g, dst_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix)
  func.return
}

// CHECK-LABEL: func.func @views
// CHECK:       nisa.dma_copy_indirect(dst={{.*}} %g, src={{.*}} %table, src_index={{.*}} %ix, oob_is_err=false) engine=dma
// CHECK-NEXT:  %p = memref.reinterpret_cast %g to offset: [0], sizes: [128, 8, 8], strides: [64, 1, 8]
// CHECK:       %v = nisa.view_dtype(source=memref<128x64xf32, #nisa.mem<sbuf>> %g) : memref<128x64xi32, #nisa.mem<sbuf>>
// CHECK:       nisa.dma_copy_indirect(dst={{.*}} %table, src={{.*}} %g, dst_index={{.*}} %ix, oob_is_err=true) engine=dma
// CHECK-NOT:   nki.

// SCHED:      %g = nisa.alloc {{.*}}nkim.offset = 64 : i64
// SCHED:      nisa.dma_copy_indirect({{.*}}) engine=dma {nkim.id = 1 : i64, nkim.queue = "dma1", nkim.deps = [0 : i64]}
// The view %p keeps %g live until its read: %y is placed after %g, not over it.
// SCHED:      %y = nisa.alloc {{.*}}nkim.offset = 320 : i64
// SCHED:      nisa.tensor_copy({{.*}} %p) engine=vector {nkim.id = 2 : i64, nkim.queue = "vector", nkim.deps = [1 : i64]}
// the scatter (a store: queue dma2) is started before the gpsimd copy (list scheduling)
// SCHED:      nisa.dma_copy_indirect({{.*}}) engine=dma {nkim.id = 3 : i64, nkim.queue = "dma2", nkim.deps = [1 : i64]}
// SCHED:      nisa.tensor_copy({{.*}} %v) engine=gpsimd {nkim.id = 4 : i64, nkim.queue = "gpsimd", nkim.deps = [2 : i64]}
