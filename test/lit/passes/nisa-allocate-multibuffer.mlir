// nisa-allocate: multi-buffering of tensors allocated in affine_range bodies.  Such a
// tensor gets k rotating copies (2 <= k <= 4, k <= the number of times its alloc runs):
// nkim.copies = k, nkim.copy_stride = s (bytes per partition) and the operand
// copy(%slot), where %slot is the linear iteration number of its innermost loop,
// computed right before the alloc; copy (slot mod k) lives at nkim.offset + c * s.
// RUN: %nki-opt %s --split-input-file -p nisa-allocate | filecheck %s
// RUN: %nki-opt %s --split-input-file -p 'nisa-allocate{max-copies=2}' | filecheck %s --check-prefix=TWO

// A double-buffered loop: 2 trips, so 2 copies.  The loop's body tensors are reserved
// over the whole loop (iterations may overlap), x (live across the loop) keeps its own bytes.
// CHECK-LABEL: func.func @double_buffer
// CHECK:         %x = nisa.alloc alignment=64 {nkim.name = "x", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:         scf.for %i = %c0 to %c2 step %c1 {
// CHECK-NEXT:      %in = nisa.alloc copy(%i) alignment=64 {nkim.name = "in", nkim.partition = 0 : i64, nkim.offset = 512 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 2048 : i64} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK:           %res = nisa.alloc copy(%i) alignment=64 {nkim.name = "res", nkim.partition = 0 : i64, nkim.offset = 4608 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 1024 : i64} : memref<128x256xf32, #nisa.mem<sbuf>>
// CHECK:         } {nki.range = "affine"}
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @double_buffer(%a: memref<256x512xf32, #nisa.mem<shared_hbm>>, %o: memref<256x256xf32, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %x = nisa.alloc {nkim.name = "x"} : memref<128x128xf32, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<128x128xf32, #nisa.mem<sbuf>> %x, value=f32 %zero) engine=vector
    scf.for %i = %c0 to %c2 step %c1 {
      %in = nisa.alloc {nkim.name = "in"} : memref<128x512xf32, #nisa.mem<sbuf>>
      %r = arith.muli %i, %c128 : index
      %av = memref.subview %a[%r, 0] [128, 512] [1, 1] : memref<256x512xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>>
      nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %in, src=memref<128x512xf32, strided<[512, 1], offset: ?>, #nisa.mem<shared_hbm>> %av) engine=dma
      %res = nisa.alloc {nkim.name = "res"} : memref<128x256xf32, #nisa.mem<sbuf>>
      %iv = memref.subview %in[0, 0] [128, 256] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[512, 1]>, #nisa.mem<sbuf>>
      nisa.tensor_copy(dst=memref<128x256xf32, #nisa.mem<sbuf>> %res, src=memref<128x256xf32, strided<[512, 1]>, #nisa.mem<sbuf>> %iv) engine=vector
      %ov = memref.subview %o[%r, 0] [128, 256] [1, 1] : memref<256x256xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>>
      nisa.dma_copy(dst=memref<128x256xf32, strided<[256, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x256xf32, #nisa.mem<sbuf>> %res) engine=dma
    } {nki.range = "affine"}
    nisa.release %x : memref<128x128xf32, #nisa.mem<sbuf>>
    func.return
  }
}

// -----

// A loop nest: sequential %m (lb 1, step 2: 3 trips), static %n (1 trip: skipped),
// affine %k (lb 0, step 4: 2 trips).  The slot is ((m - 1) / 2) * 2 + k / 4, the number of
// the k iteration over the whole run (0..5), so k may have 4 copies (max-copies=2: 2).
// The second alloc of the body shares the slot.  An alloc of the m body is not in an
// affine loop: one copy.
// CHECK-LABEL: func.func @nest
// CHECK:         %acc = nisa.alloc alignment=4 {nkim.name = "acc", nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.bank = 0 : i64} : memref<128x512xf32, #nisa.mem<psum>>
// CHECK:           scf.for %k = %c0 to %c8 step %c4 {
// CHECK-NEXT:        %[[LB:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[SUB:.*]] = arith.subi %m, %[[LB]] : index
// CHECK-NEXT:        %[[STEP:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[OUTER:.*]] = arith.divui %[[SUB]], %[[STEP]] : index
// CHECK-NEXT:        %[[STEPK:.*]] = arith.constant 4 : index
// CHECK-NEXT:        %[[INNER:.*]] = arith.divui %k, %[[STEPK]] : index
// CHECK-NEXT:        %[[TRIPS:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[MUL:.*]] = arith.muli %[[OUTER]], %[[TRIPS]] : index
// CHECK-NEXT:        %[[SLOT:.*]] = arith.addi %[[MUL]], %[[INNER]] : index
// CHECK-NEXT:        %lhs = nisa.alloc copy(%[[SLOT]]) alignment=64 {nkim.name = "lhs", nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.copies = 4 : i64, nkim.copy_stride = 256 : i64}
// CHECK:             %rhs = nisa.alloc copy(%[[SLOT]]) alignment=64 {nkim.name = "rhs", nkim.partition = 0 : i64, nkim.offset = 1024 : i64, nkim.copies = 4 : i64, nkim.copy_stride = 1024 : i64}
// TWO-LABEL: func.func @nest
// TWO:         %lhs = nisa.alloc copy(%{{.*}}) alignment=64 {nkim.name = "lhs", nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 256 : i64}
// TWO:         %rhs = nisa.alloc copy(%{{.*}}) alignment=64 {nkim.name = "rhs", nkim.partition = 0 : i64, nkim.offset = 512 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 1024 : i64}
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @nest(%a: memref<128x128xbf16, #nisa.mem<shared_hbm>>, %b: memref<128x512xbf16, #nisa.mem<shared_hbm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c6 = arith.constant 6 : index
    %c8 = arith.constant 8 : index
    %c2 = arith.constant 2 : index
    scf.for %m = %c1 to %c6 step %c2 {
      scf.for %n = %c0 to %c1 step %c1 {
        %acc = nisa.alloc {nkim.name = "acc"} : memref<128x512xf32, #nisa.mem<psum>>
        scf.for %k = %c0 to %c8 step %c4 {
          %lhs = nisa.alloc {nkim.name = "lhs"} : memref<128x128xbf16, #nisa.mem<sbuf>>
          %rhs = nisa.alloc {nkim.name = "rhs"} : memref<128x512xbf16, #nisa.mem<sbuf>>
          nisa.dma_copy(dst=memref<128x128xbf16, #nisa.mem<sbuf>> %lhs, src=memref<128x128xbf16, #nisa.mem<shared_hbm>> %a) engine=dma
          nisa.dma_copy(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %rhs, src=memref<128x512xbf16, #nisa.mem<shared_hbm>> %b) engine=dma
          nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %acc, stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %lhs, moving=memref<128x512xbf16, #nisa.mem<sbuf>> %rhs, is_transpose=false, perf_opt=none_, psum_zero_region=size2048, psum_accumulate_flags=auto) engine=tensor
        } {nki.range = "affine"}
        nisa.release %acc : memref<128x512xf32, #nisa.mem<psum>>
      } {nki.range = "static"}
    } {nki.range = "sequential"}
    func.return
  }
}

// -----

// PSUM: a copy never straddles a bank.  A 1200-byte tensor gets a 2048-byte stride
// (one bank per copy; 3 trips: 3 copies, in banks 1..3, as bank 0 holds p, live
// across the loops); a 512-byte one gets a 512-byte stride (its loop runs 24 times in
// all: 4 copies, filling bank 4).  nkim.bank is copy 0's bank.
// CHECK-LABEL: func.func @psum_copies
// CHECK:         %p = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 0 : i64, nkim.bank = 0 : i64}
// CHECK:         %q = nisa.alloc copy(%i) alignment=4 {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.bank = 1 : i64, nkim.copies = 3 : i64, nkim.copy_stride = 2048 : i64} : memref<128x300xf32, #nisa.mem<psum>>
// CHECK:           scf.for %j
// CHECK-NEXT:        %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:        %[[I8:.*]] = arith.muli %i, %[[EIGHT]] : index
// CHECK-NEXT:        %[[S:.*]] = arith.addi %[[I8]], %j : index
// CHECK-NEXT:        %r = nisa.alloc copy(%[[S]]) alignment=4 {nkim.partition = 0 : i64, nkim.offset = 8192 : i64, nkim.bank = 4 : i64, nkim.copies = 4 : i64, nkim.copy_stride = 512 : i64} : memref<128x128xf32, #nisa.mem<psum>>
module {
  func.func @psum_copies() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
    %p = nisa.alloc : memref<128x100xf32, #nisa.mem<psum>>
    scf.for %i = %c0 to %c3 step %c1 {
      %q = nisa.alloc : memref<128x300xf32, #nisa.mem<psum>>
      nisa.memset(dst=memref<128x300xf32, #nisa.mem<psum>> %q, value=f32 %zero) engine=vector
      scf.for %j = %c0 to %c8 step %c1 {
        %r = nisa.alloc : memref<128x128xf32, #nisa.mem<psum>>
        nisa.memset(dst=memref<128x128xf32, #nisa.mem<psum>> %r, value=f32 %zero) engine=vector
        nisa.memset(dst=memref<128x100xf32, #nisa.mem<psum>> %p, value=f32 %zero) engine=vector
      } {nki.range = "affine"}
    } {nki.range = "affine"}
    func.return
  }
}

// -----

// Not multi-buffered: a sequential_range body, a loop with dynamic bounds, an alloc under
// scf.if, a loop of one iteration, and a directly allocated tensor.
// CHECK-LABEL: func.func @not_rotated
// CHECK-NOT:     nkim.copies
// CHECK-NOT:     copy(
// CHECK:         func.return
module {
  func.func @not_rotated(%n: index, %flag: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c4 step %c1 {
      %s = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
      nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %s, value=f32 %zero) engine=vector
    } {nki.range = "sequential"}
    scf.for %i = %c0 to %n step %c1 {
      %d = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
      nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, value=f32 %zero) engine=vector
    } {nki.range = "affine"}
    scf.for %i = %c0 to %c4 step %c1 {
      scf.if %flag {
        %f = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
        nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %f, value=f32 %zero) engine=vector
      }
    } {nki.range = "affine"}
    scf.for %i = %c0 to %c1 step %c1 {
      %o = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
      nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %o, value=f32 %zero) engine=vector
    } {nki.range = "affine"}
    scf.for %i = %c0 to %c4 step %c1 {
      %pin = nisa.alloc {nkim.address = [0, 0]} : memref<128x64xf32, #nisa.mem<sbuf>>
      nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %pin, value=f32 %zero) engine=vector
    } {nki.range = "affine"}
    func.return
  }
}
