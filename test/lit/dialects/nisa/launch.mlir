// nisa.program_id (the running instance's id as an index, on the sync queue) and
// nisa.sendrecv with run-time rank index operands, round-tripped custom -> custom and
// custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @swap(%x: memref<256x64xf32, #nisa.mem<shared_hbm>>) {
    %pid = nisa.program_id(axis=0) engine=sync : index
    %cm1 = arith.constant -1 : index
    %mine = nisa.alloc alignment=64 : memref<128x64xf32, #nisa.mem<sbuf>>
    %got = nisa.alloc alignment=64 : memref<128x64xf32, #nisa.mem<sbuf>>
    %0 = arith.muli %pid, %cm1 : index
    nisa.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %mine, dst=memref<128x64xf32, #nisa.mem<sbuf>> %got, send_to_rank_index=index %0, recv_from_rank_index=index %0, send_to_rank=1, recv_from_rank=1, pipe_id=0) engine=dma
    func.return
  }
}

// CHECK:         %pid = nisa.program_id(axis=0) engine=sync : index
// CHECK:         nisa.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %mine, dst=memref<128x64xf32, #nisa.mem<sbuf>> %got, send_to_rank_index=index %0, recv_from_rank_index=index %0, send_to_rank=1, recv_from_rank=1, pipe_id=0) engine=dma
