// The LNC2 cross-core instructions in the nki dialect (dialects/isa_collective.py):
// nki.sendrecv exchanges SBUF tiles between the two cores (ranks 0/1, pipe_id, optional
// dma_engine=gpsimd_dma; src/dst may differ in shape but not in partitions, elements per
// partition or dtype) and nki.core_barrier synchronises them on a shared_hbm tensor
// (cores=[0, 1]; the engine is optional at this level).  Round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @collective(%out: memref<256x64xf32, #nisa.mem<shared_hbm>>) {
    %a = nki.ndarray() : memref<128x64xf32, #nisa.mem<sbuf>>
    %b = nki.ndarray() : memref<128x64xf32, #nisa.mem<sbuf>>
    %s = nki.ndarray() : memref<128x2x32xbf16, #nisa.mem<sbuf>>
    %r = nki.ndarray() : memref<128x64xbf16, #nisa.mem<sbuf>>
    nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xf32, #nisa.mem<sbuf>> %b, send_to_rank=1, recv_from_rank=1, pipe_id=0)
    nki.sendrecv(src=memref<128x2x32xbf16, #nisa.mem<sbuf>> %s, dst=memref<128x64xbf16, #nisa.mem<sbuf>> %r, send_to_rank=0, recv_from_rank=1, pipe_id=2, dma_engine=gpsimd_dma)
    nki.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1])
    nki.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=vector
    func.return
  }
}

// CHECK-LABEL: func.func @collective
// CHECK:         nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xf32, #nisa.mem<sbuf>> %b, send_to_rank=1, recv_from_rank=1, pipe_id=0)
// CHECK-NEXT:    nki.sendrecv(src=memref<128x2x32xbf16, #nisa.mem<sbuf>> %s, dst=memref<128x64xbf16, #nisa.mem<sbuf>> %r, send_to_rank=0, recv_from_rank=1, pipe_id=2, dma_engine=gpsimd_dma)
// CHECK-NEXT:    nki.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1])
// CHECK-NEXT:    nki.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=vector

// GENERIC: "nki.sendrecv"(%a, %b) <{send_to_rank = 1 : i64, recv_from_rank = 1 : i64, pipe_id = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 0>}>
// GENERIC: "nki.sendrecv"(%s, %r) <{send_to_rank = 0 : i64, recv_from_rank = 1 : i64, pipe_id = 2 : i64, dma_engine = "gpsimd_dma", operandSegmentSizes = array<i32: 1, 1, 0, 0>}>
// GENERIC: "nki.core_barrier"(%out) <{cores = [0 : i64, 1 : i64]}>
// GENERIC: "nki.core_barrier"(%out) <{cores = [0 : i64, 1 : i64], engine = "vector"}>
