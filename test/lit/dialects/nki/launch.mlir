// A kernel traced once for both instances of an LNC2 launch: nki.program_id gives the
// running instance's id as an index (read when it runs); views take it as a dynamic
// offset, and nki.sendrecv a rank as its constant plus a run-time index operand.
// Round-tripped custom -> custom and custom -> generic -> custom (the lowering:
// passes/lower-launch.mlir).
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

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

// CHECK:         %pid = nki.program_id(axis=0) : index
// CHECK:         %1 = memref.subview %x[%0, 0] [128, 64] [1, 1]
// CHECK:         nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %mine, dst=memref<128x64xf32, #nisa.mem<sbuf>> %got, send_to_rank_index=index %2, recv_from_rank_index=index %2, send_to_rank=1, recv_from_rank=1, pipe_id=0)

// GENERIC: "nki.program_id"() <{axis = 0 : i64}> : () -> index
// GENERIC: "nki.sendrecv"(
