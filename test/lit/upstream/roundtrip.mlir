// Our generic output parses and verifies in upstream MLIR (iree-opt / mlir-opt with
// --allow-unregistered-dialect: nisa ops stay opaque, builtin/func/arith/scf/memref are
// checked for real, including memref.subview's strided result types), and what
// upstream prints -- also after its canonicalize and cse -- parses back in nki-opt.
// REQUIRES: upstream-mlir
// RUN: %nki-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --canonicalize --cse --mlir-print-op-generic | %nki-opt | filecheck %s
// Placement and schedule attributes (nkim.*) survive the trip.
// RUN: %nki-opt %s -p nisa-allocate,nisa-schedule --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | %nki-opt | filecheck %s --check-prefix=PLACED

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @k(%a: memref<256x1024xf32, #nisa.mem<shared_hbm>>, %w: memref<128x128xbf16, #nisa.mem<shared_hbm>>) -> memref<256x1024xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]} {
    %out = nisa.alloc : memref<256x1024xf32, #nisa.mem<shared_hbm>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %w_sb = nisa.alloc alignment=64 {nkim.name = "w_sb"} : memref<128x128xbf16, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x128xbf16, #nisa.mem<sbuf>> %w_sb, src=memref<128x128xbf16, #nisa.mem<shared_hbm>> %w) engine=dma
    scf.for %i = %c0 to %c2 step %c1 {
      %r0 = arith.muli %i, %c128 : index
      scf.for %j = %c0 to %c2 step %c1 {
        %c0f = arith.muli %j, %c512 : index
        %a_sb = nisa.alloc {nkim.name = "a_sb"} : memref<128x512xf32, #nisa.mem<sbuf>>
        %av = memref.subview %a[%r0, %c0f] [128, 512] [1, 1] : memref<256x1024xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>
        nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a_sb, src=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> %av, dge_mode=no_dge, oob_is_err=true) engine=dma
        %a_bf = nisa.alloc {nkim.name = "a_bf"} : memref<128x512xbf16, #nisa.mem<sbuf>>
        nisa.activation(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %a_bf, src=memref<128x512xf32, #nisa.mem<sbuf>> %a_sb, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar
        %acc = nisa.alloc {nkim.name = "acc"} : memref<128x512xf32, #nisa.mem<psum>>
        nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %acc, stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %w_sb, moving=memref<128x512xbf16, #nisa.mem<sbuf>> %a_bf, is_transpose=false, psum_accumulate_flags=overwrite) engine=tensor
        %half = memref.subview %a_sb[0, 256] [128, 256] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>>
        %quarter = memref.subview %half[0, 0] [128, 128] [1, 1] : memref<128x256xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>> to memref<128x128xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>>
        %q_sb = nisa.alloc {nkim.name = "q_sb"} : memref<128x128xf32, #nisa.mem<sbuf>>
        nisa.tensor_scalar_arith(dst=memref<128x128xf32, #nisa.mem<sbuf>> %q_sb, src=memref<128x128xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>> %quarter, operand0=f32 %one, op0=multiply) engine=vector
        %o_sb = nisa.alloc {nkim.name = "o_sb"} : memref<128x512xf32, #nisa.mem<sbuf>>
        nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %o_sb, lhs=memref<128x512xf32, #nisa.mem<psum>> %acc, rhs=memref<128x512xf32, #nisa.mem<sbuf>> %a_sb, op=add) engine=vector
        %ov = memref.subview %out[%r0, %c0f] [128, 512] [1, 1] : memref<256x1024xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>
        nisa.dma_copy(dst=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x512xf32, #nisa.mem<sbuf>> %o_sb) engine=dma
        nisa.release %q_sb : memref<128x128xf32, #nisa.mem<sbuf>>
      } {nki.range = "sequential"}
    } {nki.range = "affine"}
    func.return %out : memref<256x1024xf32, #nisa.mem<shared_hbm>>
  }
}

// Upstream renames values (%0, %arg0, ...) and may reorder constants, so values are
// matched by pattern.
// CHECK:       builtin.module attributes {nisa.target = #nisa.target<trn2>}
// CHECK:       func.func @k(%[[A:.*]]: memref<256x1024xf32, #nisa.mem<shared_hbm>>, %[[W:.*]]: memref<128x128xbf16, #nisa.mem<shared_hbm>>) -> memref<256x1024xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]}
// CHECK:         %[[OUT:.*]] = nisa.alloc : memref<256x1024xf32, #nisa.mem<shared_hbm>>
// CHECK:         %[[WSB:.*]] = nisa.alloc alignment=64 {nkim.name = "w_sb"} : memref<128x128xbf16, #nisa.mem<sbuf>>
// CHECK:         nisa.dma_copy(dst=memref<128x128xbf16, #nisa.mem<sbuf>> %[[WSB]], src=memref<128x128xbf16, #nisa.mem<shared_hbm>> %[[W]]) engine=dma
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[R0:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[C0F:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:             %[[ASB:.*]] = nisa.alloc {nkim.name = "a_sb"} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK:             %[[AV:.*]] = memref.subview %[[A]][%[[R0]], %[[C0F]]] [128, 512] [1, 1] : memref<256x1024xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>
// CHECK:             nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %[[ASB]], src=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> %[[AV]], dge_mode=no_dge, oob_is_err=true) engine=dma
// CHECK:             %[[ABF:.*]] = nisa.alloc {nkim.name = "a_bf"} : memref<128x512xbf16, #nisa.mem<sbuf>>
// CHECK:             nisa.activation(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %[[ABF]], src=memref<128x512xf32, #nisa.mem<sbuf>> %[[ASB]], bias=f32 %{{.*}}, scale=f32 %{{.*}}, op=exp) engine=scalar
// CHECK:             %[[ACC:.*]] = nisa.alloc {nkim.name = "acc"} : memref<128x512xf32, #nisa.mem<psum>>
// CHECK:             nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %[[ACC]], stationary=memref<128x128xbf16, #nisa.mem<sbuf>> %[[WSB]], moving=memref<128x512xbf16, #nisa.mem<sbuf>> %[[ABF]], is_transpose=false, psum_accumulate_flags=overwrite) engine=tensor
// CHECK:             %[[HALF:.*]] = memref.subview %[[ASB]][0, 256] [128, 256] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>>
// CHECK:             %[[QUARTER:.*]] = memref.subview %[[HALF]][0, 0] [128, 128] [1, 1] : memref<128x256xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>> to memref<128x128xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>>
// CHECK:             %[[Q:.*]] = nisa.alloc {nkim.name = "q_sb"} : memref<128x128xf32, #nisa.mem<sbuf>>
// CHECK:             nisa.tensor_scalar_arith(dst=memref<128x128xf32, #nisa.mem<sbuf>> %[[Q]], src=memref<128x128xf32, strided<[512, 1], offset: 256>, #nisa.mem<sbuf>> %[[QUARTER]], operand0=f32 %{{.*}}, op0=multiply) engine=vector
// CHECK:             %[[O:.*]] = nisa.alloc {nkim.name = "o_sb"} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK:             nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %[[O]], lhs=memref<128x512xf32, #nisa.mem<psum>> %[[ACC]], rhs=memref<128x512xf32, #nisa.mem<sbuf>> %[[ASB]], op=add) engine=vector
// CHECK:             %[[OV:.*]] = memref.subview %[[OUT]][%[[R0]], %[[C0F]]] [128, 512] [1, 1] : memref<256x1024xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>
// CHECK:             nisa.dma_copy(dst=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> %[[OV]], src=memref<128x512xf32, #nisa.mem<sbuf>> %[[O]]) engine=dma
// CHECK:             nisa.release %[[Q]] : memref<128x128xf32, #nisa.mem<sbuf>>
// CHECK:           } {nki.range = "sequential"}
// CHECK:         } {nki.range = "affine"}
// CHECK:         func.return %[[OUT]] : memref<256x1024xf32, #nisa.mem<shared_hbm>>

// Upstream sorts attribute dictionaries by name.
// PLACED:       builtin.module attributes {nisa.target = #nisa.target<trn2>, {{.*}}nkim.psum_peak_bytes = 2048 : i64, {{.*}}nkim.sbuf_max_live_bytes = 4864 : i64, {{.*}}nkim.sbuf_peak_bytes = 4864 : i64, nkim.schedule = "list"}
// PLACED:       nisa.alloc alignment=64 {nkim.name = "w_sb", nkim.offset = 0 : i64, nkim.partition = 0 : i64}
// PLACED:       nisa.dma_copy({{.*}}) engine=dma {nkim.deps = [], nkim.id = 0 : i64, nkim.queue = "dma0"}
// PLACED:       nisa.alloc alignment=4 {nkim.bank = 0 : i64, nkim.name = "acc", nkim.offset = 0 : i64, nkim.partition = 0 : i64}
// PLACED:       nisa.matmul({{.*}}) engine=tensor {nkim.deps = [0 : i64, 2 : i64], nkim.id = 3 : i64, nkim.queue = "tensor"}
