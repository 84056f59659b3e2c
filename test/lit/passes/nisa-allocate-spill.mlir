// nisa-allocate, spilling (nki_mlir/passes/spill.py, on by default): when the SBUF tensors
// live at the same time do not fit, a tensor live at the overflow is kept in an internal
// HBM tensor (#nisa.mem<private_hbm>, "<name>.spill") between its uses: each group of
// uses gets a short-lived tile (the accessed view when it keeps partition 0), loaded from
// the HBM tensor before and stored back after a write, with plain nisa.dma_copy ops.
// With spill=false the same kernels are out-of-memory errors located at the alloc.
// RUN: %nki-opt %s --split-input-file -p nisa-allocate | filecheck %s
// RUN: %nki-opt %s --split-input-file -p 'nisa-allocate{spill=false}' --verify-diagnostics | filecheck %s --check-prefix=OFF

// x (120000 bytes) is live over the loop, where u (120000) needs the room: trn2 has
// 212984.  x is written once (memset, stored to x.spill) and read in the loop through a
// [128, 1024] view while u is dead: only that view is reloaded, into a [128, 1024] tile.
// CHECK-LABEL: func.func @store_then_slice
// CHECK:         %[[H:.*]] = nisa.alloc {nkim.name = "x.spill", nkim.spill_of = "x"} : memref<128x30000xf32, #nisa.mem<private_hbm>>
// CHECK-NEXT:    %[[T:.*]] = nisa.alloc alignment=64 {nkim.name = "x", nkim.spill_of = "x", {{.*}}} : memref<128x30000xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:    nisa.memset(dst={{.*}} %[[T]],
// CHECK-NEXT:    nisa.dma_copy(dst=memref<128x30000xf32, #nisa.mem<private_hbm>> %[[H]], src=memref<128x30000xf32, #nisa.mem<sbuf>> %[[T]], oob_is_err=true) engine=dma
// CHECK:         scf.for
// CHECK:           nisa.memset(dst={{.*}} %u,
// CHECK:           %[[S:.*]] = nisa.alloc {{.*}}{nkim.name = "x", nkim.spill_of = "x", {{.*}}} : memref<128x1024xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:      %[[V:.*]] = memref.subview %[[H]][0, 0] [128, 1024] [1, 1] : memref<128x30000xf32, #nisa.mem<private_hbm>> to memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<private_hbm>>
// CHECK-NEXT:      nisa.dma_copy(dst=memref<128x1024xf32, #nisa.mem<sbuf>> %[[S]], src={{.*}} %[[V]], oob_is_err=true) engine=dma
// CHECK:           nisa.tensor_copy(dst={{.*}} %w, src=memref<128x1024xf32, #nisa.mem<sbuf>> %[[S]])
// CHECK-NOT:     %x = nisa.alloc
// OFF: k.py:6:8: out of memory: cannot place tensor 'u' in SBUF
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @store_then_slice(%o1: memref<128x30000xf32, #nisa.mem<shared_hbm>>, %o2: memref<128x1024xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f32
    %x = nisa.alloc {nkim.name = "x"} : memref<128x30000xf32, #nisa.mem<sbuf>> loc("k.py":3:4)
    nisa.memset(dst=memref<128x30000xf32, #nisa.mem<sbuf>> %x, value=f32 %zero) engine=vector loc("k.py":4:4)
    scf.for %i = %c0 to %c2 step %c1 {
      %u = nisa.alloc {nkim.name = "u"} : memref<128x30000xf32, #nisa.mem<sbuf>> loc("k.py":6:8)
      nisa.memset(dst=memref<128x30000xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector loc("k.py":7:8)
      nisa.dma_copy(dst=memref<128x30000xf32, #nisa.mem<shared_hbm>> %o1, src=memref<128x30000xf32, #nisa.mem<sbuf>> %u, oob_is_err=true) engine=dma loc("k.py":8:8)
      %w = nisa.alloc {nkim.name = "w"} : memref<128x1024xf32, #nisa.mem<sbuf>> loc("k.py":9:8)
      %xs = memref.subview %x[0, 0] [128, 1024] [1, 1] : memref<128x30000xf32, #nisa.mem<sbuf>> to memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<sbuf>> loc("k.py":10:8)
      nisa.tensor_copy(dst=memref<128x1024xf32, #nisa.mem<sbuf>> %w, src=memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<sbuf>> %xs) engine=vector loc("k.py":10:8)
      nisa.dma_copy(dst=memref<128x1024xf32, #nisa.mem<shared_hbm>> %o2, src=memref<128x1024xf32, #nisa.mem<sbuf>> %w, oob_is_err=true) engine=dma loc("k.py":11:8)
    } {nki.range = "affine"}
    func.return
  }
}

// -----

// Rematerialisation: x is a copy of the kernel input %in (one whole DMA, and nothing
// writes %in), so it is reloaded from %in where it is read; no HBM tensor, and the first
// copy is gone.
// CHECK-LABEL: func.func @remat
// CHECK-NOT:     private_hbm
// CHECK:         scf.for
// CHECK:           nisa.dma_copy(dst={{.*}} %o1, src={{.*}} %u,
// CHECK-NEXT:      %[[R:.*]] = nisa.alloc alignment=64 {nkim.name = "x", nkim.spill_of = "x", {{.*}}} : memref<128x20000xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:      nisa.dma_copy(dst=memref<128x20000xf32, #nisa.mem<sbuf>> %[[R]], src=memref<128x20000xf32, #nisa.mem<shared_hbm>> %in, oob_is_err=true) engine=dma
// CHECK:           nisa.tensor_copy(dst={{.*}} %w, src={{.*}} %[[R]])
// CHECK-NOT:     private_hbm
// OFF: k.py:15:8: out of memory: cannot place tensor 'u' in SBUF
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @remat(%in: memref<128x20000xf32, #nisa.mem<shared_hbm>>, %o1: memref<128x40000xf32, #nisa.mem<shared_hbm>>, %o2: memref<128x20000xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f32
    %x = nisa.alloc {nkim.name = "x"} : memref<128x20000xf32, #nisa.mem<sbuf>> loc("k.py":12:4)
    nisa.dma_copy(dst=memref<128x20000xf32, #nisa.mem<sbuf>> %x, src=memref<128x20000xf32, #nisa.mem<shared_hbm>> %in, oob_is_err=true) engine=dma loc("k.py":13:4)
    scf.for %i = %c0 to %c2 step %c1 {
      %u = nisa.alloc {nkim.name = "u"} : memref<128x40000xf32, #nisa.mem<sbuf>> loc("k.py":15:8)
      nisa.memset(dst=memref<128x40000xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector loc("k.py":16:8)
      nisa.dma_copy(dst=memref<128x40000xf32, #nisa.mem<shared_hbm>> %o1, src=memref<128x40000xf32, #nisa.mem<sbuf>> %u, oob_is_err=true) engine=dma loc("k.py":17:8)
      %w = nisa.alloc {nkim.name = "w"} : memref<128x20000xf32, #nisa.mem<sbuf>> loc("k.py":18:8)
      nisa.tensor_copy(dst=memref<128x20000xf32, #nisa.mem<sbuf>> %w, src=memref<128x20000xf32, #nisa.mem<sbuf>> %x) engine=vector loc("k.py":19:8)
      nisa.dma_copy(dst=memref<128x20000xf32, #nisa.mem<shared_hbm>> %o2, src=memref<128x20000xf32, #nisa.mem<sbuf>> %w, oob_is_err=true) engine=dma loc("k.py":20:8)
    } {nki.range = "affine"}
    func.return
  }
}

// -----

// A read-modify-write accumulator: acc (120000 bytes) is live over the loop; in the loop
// its [128, 1024] view is loaded, doubled and stored back while u is dead.  The final
// store of all of acc to %out, a DMA alone in its group, reads acc.spill directly (an
// HBM-to-HBM DMA), with no tile.
// CHECK-LABEL: func.func @accumulate
// CHECK:         %[[H:.*]] = nisa.alloc {nkim.name = "acc.spill", nkim.spill_of = "acc"} : memref<128x30000xf32, #nisa.mem<private_hbm>>
// CHECK:         scf.for
// CHECK:           %[[S:.*]] = nisa.alloc {{.*}}{nkim.name = "acc", nkim.spill_of = "acc", {{.*}}} : memref<128x1024xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:      %[[V:.*]] = memref.subview %[[H]][0, 0] [128, 1024] [1, 1]
// CHECK-NEXT:      nisa.dma_copy(dst={{.*}} %[[S]], src={{.*}} %[[V]], oob_is_err=true) engine=dma
// CHECK-NEXT:      nisa.tensor_tensor_arith(dst={{.*}} %[[S]], lhs={{.*}} %[[S]], rhs={{.*}} %[[S]], op=add)
// CHECK-NEXT:      nisa.dma_copy(dst=memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<private_hbm>> %[[V]], src=memref<128x1024xf32, #nisa.mem<sbuf>> %[[S]], oob_is_err=true) engine=dma
// CHECK:         }
// CHECK-NEXT:    nisa.dma_copy(dst=memref<128x30000xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x30000xf32, #nisa.mem<private_hbm>> %[[H]], oob_is_err=true) engine=dma
// OFF: k.py:24:8: out of memory: cannot place tensor 'u' in SBUF
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @accumulate(%o1: memref<128x30000xf32, #nisa.mem<shared_hbm>>, %out: memref<128x30000xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f32
    %acc = nisa.alloc {nkim.name = "acc"} : memref<128x30000xf32, #nisa.mem<sbuf>> loc("k.py":21:4)
    nisa.memset(dst=memref<128x30000xf32, #nisa.mem<sbuf>> %acc, value=f32 %zero) engine=vector loc("k.py":22:4)
    scf.for %i = %c0 to %c2 step %c1 {
      %u = nisa.alloc {nkim.name = "u"} : memref<128x30000xf32, #nisa.mem<sbuf>> loc("k.py":24:8)
      nisa.memset(dst=memref<128x30000xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector loc("k.py":25:8)
      nisa.dma_copy(dst=memref<128x30000xf32, #nisa.mem<shared_hbm>> %o1, src=memref<128x30000xf32, #nisa.mem<sbuf>> %u, oob_is_err=true) engine=dma loc("k.py":26:8)
      %as = memref.subview %acc[0, 0] [128, 1024] [1, 1] : memref<128x30000xf32, #nisa.mem<sbuf>> to memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<sbuf>> loc("k.py":27:8)
      nisa.tensor_tensor_arith(dst=memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<sbuf>> %as, lhs=memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<sbuf>> %as, rhs=memref<128x1024xf32, strided<[30000, 1]>, #nisa.mem<sbuf>> %as, op=add) engine=vector loc("k.py":27:8)
    } {nki.range = "sequential"}
    nisa.dma_copy(dst=memref<128x30000xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x30000xf32, #nisa.mem<sbuf>> %acc, oob_is_err=true) engine=dma loc("k.py":29:4)
    func.return
  }
}

// -----

// Tiled rematerialisation: blk [128, 2, 512] (4096 bytes) is filled tile by tile from %in by
// one DMA loop nest (%j over its dim 1), and read one tile at a time later, while u
// (210000 bytes) is live.  Each read reloads its tile from the %in view the nest loaded it
// from, with %j replaced by the read's offset: no HBM tensor, and the fill is gone.
// CHECK-LABEL: func.func @tiled_remat
// CHECK-NOT:     private_hbm
// CHECK-NOT:     nisa.dma_copy(dst={{.*}}%blk
// CHECK:         nisa.memset(dst={{.*}} %u,
// CHECK:         scf.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK:           %[[T:.*]] = nisa.alloc {{.*}}{nkim.name = "blk", nkim.spill_of = "blk", {{.*}}} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:      %[[O:.*]] = arith.muli %[[R]], %c512 : index
// CHECK-NEXT:      %[[V:.*]] = memref.subview %in[0, %[[O]]] [128, 512] [1, 1]
// CHECK-NEXT:      nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %[[T]], src={{.*}} %[[V]], oob_is_err=true) engine=dma
// CHECK:           nisa.tensor_copy(dst={{.*}} %w, src=memref<128x512xf32, #nisa.mem<sbuf>> %[[T]])
// CHECK-NOT:     private_hbm
// OFF: k.py:34:4: out of memory: cannot place tensor 'u' in SBUF
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @tiled_remat(%in: memref<128x1024xf32, #nisa.mem<shared_hbm>>, %o1: memref<128x52500xf32, #nisa.mem<shared_hbm>>, %o2: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c512 = arith.constant 512 : index
    %zero = arith.constant 0.0 : f32
    %blk = nisa.alloc {nkim.name = "blk"} : memref<128x2x512xf32, #nisa.mem<sbuf>> loc("k.py":30:4)
    scf.for %j = %c0 to %c2 step %c1 {
      %d = memref.subview %blk[0, %j, 0] [128, 1, 512] [1, 1, 1] : memref<128x2x512xf32, #nisa.mem<sbuf>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<sbuf>> loc("k.py":32:8)
      %col = arith.muli %j, %c512 : index
      %s = memref.subview %in[0, %col] [128, 512] [1, 1] : memref<128x1024xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> loc("k.py":32:8)
      nisa.dma_copy(dst=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<sbuf>> %d, src=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> %s, oob_is_err=true) engine=dma loc("k.py":32:8)
    } {nki.range = "affine"}
    %u = nisa.alloc {nkim.name = "u"} : memref<128x52500xf32, #nisa.mem<sbuf>> loc("k.py":34:4)
    nisa.memset(dst=memref<128x52500xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector loc("k.py":35:4)
    nisa.dma_copy(dst=memref<128x52500xf32, #nisa.mem<shared_hbm>> %o1, src=memref<128x52500xf32, #nisa.mem<sbuf>> %u, oob_is_err=true) engine=dma loc("k.py":36:4)
    scf.for %r = %c0 to %c2 step %c1 {
      %w = nisa.alloc {nkim.name = "w"} : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":38:8)
      %v = memref.subview %blk[0, %r, 0] [128, 1, 512] [1, 1, 1] : memref<128x2x512xf32, #nisa.mem<sbuf>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<sbuf>> loc("k.py":39:8)
      nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, src=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<sbuf>> %v) engine=vector loc("k.py":39:8)
      nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %o2, src=memref<128x512xf32, #nisa.mem<sbuf>> %w, oob_is_err=true) engine=dma loc("k.py":40:8)
    } {nki.range = "affine"}
    func.return
  }
}
