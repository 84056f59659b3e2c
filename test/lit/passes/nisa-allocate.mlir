// nisa-allocate: placement of SBUF/PSUM tensors from their live ranges.
// RUN: %nki-opt %s --split-input-file -p nisa-allocate | filecheck %s
// RUN: %nki-opt %s --split-input-file -p 'nisa-allocate{max-copies=1}' | filecheck %s --check-prefix=NOMB

// Overlapping live ranges get disjoint bytes; a tensor whose range starts after
// another's ends reuses its bytes (best fit: c takes a's bytes, d takes b's); SBUF offsets
// are 64-byte aligned (d is 40 bytes, e starts 64 bytes later); HBM is not placed.
// Sizes are bytes per partition: [128, 512] f32 = 2048, bf16 = 1024.
// CHECK-LABEL: builtin.module
// CHECK-SAME:    nkim.sbuf_peak_bytes = 3072 : i64, nkim.psum_peak_bytes = 0 : i64
// CHECK-LABEL: func.func @live_ranges
// CHECK:         %h = nisa.alloc : memref<128x512xf32, #nisa.mem<hbm>>
// CHECK:         %a = nisa.alloc alignment=64 {nkim.name = "a", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         %b = nisa.alloc alignment=64 {nkim.name = "b", nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
// CHECK:         %c = nisa.alloc alignment=64 {nkim.name = "c", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         %d = nisa.alloc alignment=64 {nkim.name = "d", nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
// CHECK:         %e = nisa.alloc alignment=64 {nkim.name = "e", nkim.partition = 0 : i64, nkim.offset = 2112 : i64}
module {
  func.func @live_ranges(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
    %h = nisa.alloc : memref<128x512xf32, #nisa.mem<hbm>>
    %a = nisa.alloc {nkim.name = "a"} : memref<128x512xf32, #nisa.mem<sbuf>>
    %b = nisa.alloc {nkim.name = "b"} : memref<128x512xbf16, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    nisa.tensor_copy(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %a) engine=vector
    %c = nisa.alloc {nkim.name = "c"} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %c, src=memref<128x512xbf16, #nisa.mem<sbuf>> %b) engine=vector
    %d = nisa.alloc {nkim.name = "d"} : memref<128x10xf32, #nisa.mem<sbuf>>
    %e = nisa.alloc {nkim.name = "e"} : memref<128x10xf32, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<128x10xf32, #nisa.mem<sbuf>> %d, src=memref<128x10xf32, #nisa.mem<sbuf>> %e) engine=vector
    nisa.release %c : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<hbm>> %h, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    func.return
  }
}

// -----

// A tensor defined before a loop and used inside it is live for the whole loop, so a
// body tensor defined after its last use in the body cannot take its bytes.  Body
// tensors of an affine_range are double-buffered (2 trips: 2 copies of 2048 bytes,
// rotating with %i) and reserved over the whole loop; after the loop their bytes are
// free again.  Uses through subview chains count.
// CHECK-LABEL: func.func @loops
// CHECK:         %x = nisa.alloc alignment=64 {nkim.name = "x", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         scf.for %i
// CHECK:           %u = nisa.alloc copy(%i) alignment=64 {nkim.name = "u", nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 2048 : i64}
// CHECK:           %t = nisa.alloc copy(%i) alignment=64 {nkim.name = "t", nkim.partition = 0 : i64, nkim.offset = 6144 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 2048 : i64}
// CHECK:         %z = nisa.alloc alignment=64 {nkim.name = "z", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// Without multi-buffering (max-copies=1) the body tensors are live only within the
// body and t sits right after u:
// NOMB-LABEL: func.func @loops
// NOMB:         %u = nisa.alloc alignment=64 {nkim.name = "u", nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
// NOMB:         %t = nisa.alloc alignment=64 {nkim.name = "t", nkim.partition = 0 : i64, nkim.offset = 4096 : i64}
// NOMB-NOT:     nkim.copies
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @loops(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>, %out: memref<256x512xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %x = nisa.alloc {nkim.name = "x"} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %x, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    scf.for %i = %c0 to %c2 step %c1 {
      %u = nisa.alloc {nkim.name = "u"} : memref<128x512xf32, #nisa.mem<sbuf>>
      %xv = memref.subview %x[0, 0] [128, 512] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x512xf32, strided<[512, 1]>, #nisa.mem<sbuf>>
      %xw = memref.subview %xv[0, 0] [128, 512] [1, 1] : memref<128x512xf32, strided<[512, 1]>, #nisa.mem<sbuf>> to memref<128x512xf32, strided<[512, 1]>, #nisa.mem<sbuf>>
      nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, src=memref<128x512xf32, strided<[512, 1]>, #nisa.mem<sbuf>> %xw) engine=vector
      %t = nisa.alloc {nkim.name = "t"} : memref<128x512xf32, #nisa.mem<sbuf>>
      nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %t, src=memref<128x512xf32, #nisa.mem<sbuf>> %u) engine=vector
      %row = arith.muli %i, %c128 : index
      %ov = memref.subview %out[%row, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>
      nisa.dma_copy(dst=memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x512xf32, #nisa.mem<sbuf>> %t) engine=dma
    } {nki.range = "affine"}
    %z = nisa.alloc {nkim.name = "z"} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %z, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    func.return
  }
}

// -----

// PSUM: 8 banks of 2048 bytes per partition.  A tensor of <= 2048 bytes stays inside
// one bank (4-byte alignment); a larger one starts on a bank boundary.
// CHECK-LABEL: builtin.module
// CHECK-SAME:    nkim.sbuf_peak_bytes = 0 : i64, nkim.psum_peak_bytes = 8544 : i64
// CHECK-LABEL: func.func @psum_banks
// CHECK:         %p0 = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.bank = 0 : i64} : memref<128x512xf32, #nisa.mem<psum>>
// CHECK:         %p1 = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.bank = 1 : i64} : memref<128x400xf32, #nisa.mem<psum>>
// CHECK:         %p2 = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 4096 : i64, nkim.bank = 2 : i64} : memref<128x200xf32, #nisa.mem<psum>>
// CHECK:         %p3 = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 6144 : i64, nkim.bank = 3 : i64} : memref<128x600xf32, #nisa.mem<psum>>
// CHECK:         %p4 = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 3648 : i64, nkim.bank = 1 : i64} : memref<128x100xf32, #nisa.mem<psum>>
module {
  func.func @psum_banks() {
    %p0 = nisa.alloc : memref<128x512xf32, #nisa.mem<psum>>
    %p1 = nisa.alloc : memref<128x400xf32, #nisa.mem<psum>>
    %p2 = nisa.alloc : memref<128x200xf32, #nisa.mem<psum>>
    %p3 = nisa.alloc : memref<128x600xf32, #nisa.mem<psum>>
    %p4 = nisa.alloc : memref<128x100xf32, #nisa.mem<psum>>
    nisa.release %p0 : memref<128x512xf32, #nisa.mem<psum>>
    nisa.release %p1 : memref<128x400xf32, #nisa.mem<psum>>
    nisa.release %p2 : memref<128x200xf32, #nisa.mem<psum>>
    nisa.release %p3 : memref<128x600xf32, #nisa.mem<psum>>
    nisa.release %p4 : memref<128x100xf32, #nisa.mem<psum>>
    func.return
  }
}

// -----

// Direct allocation (nl.ndarray(..., address=(p, off))) is honoured exactly; automatic
// tensors avoid pinned ones where they share partitions (auto and lo avoid pin, auto
// avoids hi), and ignore them where not (lo, on partitions 0..31, shares hi's bytes).
// CHECK-LABEL: builtin.module
// CHECK-SAME:    nkim.sbuf_peak_bytes = 6144 : i64, nkim.psum_peak_bytes = 8192 : i64
// CHECK-LABEL: func.func @direct
// CHECK:         %pin = nisa.alloc alignment=64 {nkim.name = "pin", nkim.address = [0 : i64, 0 : i64], nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         %auto = nisa.alloc alignment=64 {nkim.name = "auto", nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
// CHECK:         %hi = nisa.alloc alignment=64 {nkim.name = "hi", nkim.address = [64 : i64, 4096 : i64], nkim.partition = 64 : i64, nkim.offset = 4096 : i64}
// CHECK:         %lo = nisa.alloc alignment=64 {nkim.name = "lo", nkim.partition = 0 : i64, nkim.offset = 4096 : i64} : memref<32x512xf32, #nisa.mem<sbuf>>
// CHECK:         %acc = nisa.alloc alignment=4 {nkim.name = "acc", nkim.address = [0 : i64, 6144 : i64], nkim.partition = 0 : i64, nkim.offset = 6144 : i64, nkim.bank = 3 : i64}
// CHECK:         %acc2 = nisa.alloc alignment=4 {nkim.name = "acc2", nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.bank = 0 : i64}
module {
  func.func @direct(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
    %pin = nisa.alloc {nkim.name = "pin", nkim.address = [0, 0]} : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %pin, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    %auto = nisa.alloc {nkim.name = "auto"} : memref<128x512xf32, #nisa.mem<sbuf>>
    %hi = nisa.alloc {nkim.name = "hi", nkim.address = [64, 4096]} : memref<64x512xf32, #nisa.mem<sbuf>>
    %lo = nisa.alloc {nkim.name = "lo"} : memref<32x512xf32, #nisa.mem<sbuf>>
    %acc = nisa.alloc {nkim.name = "acc", nkim.address = [0, 6144]} : memref<128x512xf32, #nisa.mem<psum>>
    %acc2 = nisa.alloc {nkim.name = "acc2"} : memref<128x512xf32, #nisa.mem<psum>>
    nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %auto, src=memref<128x512xf32, #nisa.mem<sbuf>> %pin) engine=vector
    nisa.release %hi : memref<64x512xf32, #nisa.mem<sbuf>>
    nisa.release %lo : memref<32x512xf32, #nisa.mem<sbuf>>
    nisa.release %acc : memref<128x512xf32, #nisa.mem<psum>>
    nisa.release %acc2 : memref<128x512xf32, #nisa.mem<psum>>
    func.return
  }
}
