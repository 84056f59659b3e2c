// lower-nki-to-nisa on a kernel traced once for both instances of an LNC2 launch:
// nki.program_id becomes nisa.program_id (sync queue, no engine time); nki.sendrecv keeps
// its run-time rank index operands.
// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @swap(%x: memref<256x64xf32, #nisa.mem<shared_hbm>>) {
    %pid = nki.program_id(axis=0) : index
    %c128 = arith.constant 128 : index
    %cm1 = arith.constant -1 : index
    %mine = nki.ndarray(name=mine) : memref<128x64xf32, #nisa.mem<sbuf>>
    %got = nki.ndarray(name=got) : memref<128x64xf32, #nisa.mem<sbuf>>
    %0 = arith.muli %pid, %c128 : index
    %1 = memref.subview %x[%0, 0] [128, 64] [1, 1] : memref<256x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nki.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %mine, src=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %1)
    %2 = arith.muli %pid, %cm1 : index
    nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %mine, dst=memref<128x64xf32, #nisa.mem<sbuf>> %got, send_to_rank_index=index %2, recv_from_rank_index=index %2, send_to_rank=1, recv_from_rank=1, pipe_id=0)
    func.return
  }
}

// CHECK:         %pid = nisa.program_id(axis=0) engine=sync : index
// CHECK:         %1 = memref.subview %x[%0, 0] [128, 64] [1, 1]
// CHECK:         nisa.sendrecv({{.*}}send_to_rank_index=index %2, recv_from_rank_index=index %2, send_to_rank=1, recv_from_rank=1, pipe_id=0) engine=dma
