// Verifier negatives of the LNC2 cross-core instructions (dialects/isa_collective.py), one per chunk.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// trn1 has no LNC2: core_barrier needs trn2 or newer.
module attributes {nisa.target = #nisa.target<trn1>} {
  func.func @barrier_trn1(%out: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
    nki.core_barrier(data=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1])
    func.return
  }
}
// CHECK: {{^}}nisa.core_barrier: core_barrier (LNC2 cross-core barrier) needs trn2 (NeuronCore-v3) or newer, but the target is trn1

// -----

// The barrier tensor must be in shared HBM.
func.func @barrier_private(%p: memref<128x64xf32, #nisa.mem<hbm>>) {
  nki.core_barrier(data=memref<128x64xf32, #nisa.mem<hbm>> %p, cores=[0, 1])
  func.return
}
// CHECK: {{^}}nisa.core_barrier: 'data' must be a shared_hbm tensor (the data both cores synchronise on), got one in hbm

// -----

// Only cores=(0, 1).
func.func @barrier_cores(%out: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  nisa.core_barrier(data=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 2]) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.core_barrier: cores=(0, 2) is not supported; only cores=(0, 1) (the two NeuronCores of an LNC2 launch)

// -----

// sendrecv moves SBUF tiles only.
func.func @sendrecv_hbm(%x: memref<128x64xf32, #nisa.mem<shared_hbm>>, %t: memref<128x64xf32, #nisa.mem<sbuf>>) {
  nki.sendrecv(src=memref<128x64xf32, #nisa.mem<shared_hbm>> %x, dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, send_to_rank=1, recv_from_rank=1, pipe_id=0)
  func.return
}
// CHECK: {{^}}nisa.sendrecv: operand 'src' is a tensor in shared_hbm

// -----

// src and dst share a dtype.
func.func @sendrecv_dtype(%a: memref<128x64xf32, #nisa.mem<sbuf>>, %b: memref<128x64xbf16, #nisa.mem<sbuf>>) {
  nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xbf16, #nisa.mem<sbuf>> %b, send_to_rank=1, recv_from_rank=1, pipe_id=0)
  func.return
}
// CHECK: {{^}}nisa.sendrecv: 'src' and 'dst' must have the same dtype

// -----

// Ranks of an LNC2 launch are 0 and 1.
func.func @sendrecv_rank(%a: memref<128x64xf32, #nisa.mem<sbuf>>) {
  nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xf32, #nisa.mem<sbuf>> %a, send_to_rank=2, recv_from_rank=1, pipe_id=0)
  func.return
}
// CHECK: {{^}}nisa.sendrecv: send_to_rank=2 is not a rank of an LNC2 launch (0 or 1)

// -----

// gpsimd_dma moves at most 1024 bytes per partition of a 32-bit type.
func.func @sendrecv_gpsimd_size(%a: memref<128x512xf32, #nisa.mem<sbuf>>) {
  nisa.sendrecv(src=memref<128x512xf32, #nisa.mem<sbuf>> %a, dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, send_to_rank=1, recv_from_rank=1, pipe_id=0, dma_engine=gpsimd_dma) engine=dma
  func.return
}
// CHECK: {{^}}nisa.sendrecv: dma_engine=gpsimd_dma moves at most 1024/512/256 bytes per partition for 32/16/8-bit types; 'src' {{.*}} has 2048 bytes per partition
