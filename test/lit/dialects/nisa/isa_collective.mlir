// The LNC2 cross-core instructions in the nisa dialect: nisa.sendrecv (DMA engine queue)
// and nisa.core_barrier (any engine sequencer; the one it blocks).  Round-tripped
// custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @collective(%out: memref<256x64xf32, #nisa.mem<shared_hbm>>) {
    %a = nisa.alloc alignment=64 : memref<128x64xf32, #nisa.mem<sbuf>>
    %b = nisa.alloc alignment=64 : memref<128x64xf32, #nisa.mem<sbuf>>
    %i = nisa.alloc alignment=64 : memref<64x256xi8, #nisa.mem<sbuf>>
    nisa.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xf32, #nisa.mem<sbuf>> %b, send_to_rank=0, recv_from_rank=1, pipe_id=7) engine=dma
    nisa.sendrecv(src=memref<64x256xi8, #nisa.mem<sbuf>> %i, dst=memref<64x256xi8, #nisa.mem<sbuf>> %i, send_to_rank=1, recv_from_rank=0, pipe_id=0, dma_engine=gpsimd_dma) engine=dma
    nisa.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=gpsimd
    nisa.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=sync
    func.return
  }
}

// CHECK-LABEL: func.func @collective
// CHECK:         nisa.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xf32, #nisa.mem<sbuf>> %b, send_to_rank=0, recv_from_rank=1, pipe_id=7) engine=dma
// CHECK-NEXT:    nisa.sendrecv(src=memref<64x256xi8, #nisa.mem<sbuf>> %i, dst=memref<64x256xi8, #nisa.mem<sbuf>> %i, send_to_rank=1, recv_from_rank=0, pipe_id=0, dma_engine=gpsimd_dma) engine=dma
// CHECK-NEXT:    nisa.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=gpsimd
// CHECK-NEXT:    nisa.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=sync

// GENERIC: "nisa.sendrecv"(%a, %b) <{send_to_rank = 0 : i64, recv_from_rank = 1 : i64, pipe_id = 7 : i64, engine = "dma", operandSegmentSizes = array<i32: 1, 1, 0, 0>}>
// GENERIC: "nisa.sendrecv"(%i, %i) <{send_to_rank = 1 : i64, recv_from_rank = 0 : i64, pipe_id = 0 : i64, dma_engine = "gpsimd_dma", engine = "dma", operandSegmentSizes = array<i32: 1, 1, 0, 0>}>
// GENERIC: "nisa.core_barrier"(%out) <{cores = [0 : i64, 1 : i64], engine = "gpsimd"}>
// GENERIC: "nisa.core_barrier"(%out) <{cores = [0 : i64, 1 : i64], engine = "sync"}>
