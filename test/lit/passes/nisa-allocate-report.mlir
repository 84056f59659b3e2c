// nisa-allocate: the memory report on the module (bytes per partition, rotating copies
// included; see nki_mlir/passes/memory_report.py).
// SBUF: a [0, 2048) dies before the loop; u gets 2 copies of 1024 bytes over the loop:
// best fit puts them at a's [0, 2048), coldest fit (below best fit's peak) at the never-used
// [2048, 4096); q is pinned on partitions 32..63 at [4096, 4352).  Peak 4352 (partitions
// 32..63; 4096 on the others), max live 2048, fragmentation 1 - 2048/4352 = 0.5294.
// PSUM: p (1200 bytes) in bank 0, p2 (2400 bytes, more than a bank) from bank 1: banks
// 0..2, peak 2048 + 2400 = 4448, max live 3600, fragmentation 1 - 3600/4448 = 0.1906.
// RUN: %nki-opt %s -p nisa-allocate | filecheck %s

// CHECK:      builtin.module attributes {nisa.target = #nisa.target<trn2>,
// CHECK-SAME:   nkim.sbuf_peak_bytes = 4352 : i64, nkim.psum_peak_bytes = 4448 : i64,
// CHECK-SAME:   nkim.sbuf_max_live_bytes = 2048 : i64,
// CHECK-SAME:   nkim.sbuf_partition_peak_bytes = {{\[}}[0 : i64, 31 : i64, 4096 : i64], [32 : i64, 63 : i64, 4352 : i64], [64 : i64, 127 : i64, 4096 : i64]],
// CHECK-SAME:   nkim.sbuf_fragmentation = 5.294000e-01 : f64,
// CHECK-SAME:   nkim.psum_max_live_bytes = 3600 : i64,
// CHECK-SAME:   nkim.psum_partition_peak_bytes = {{\[}}[0 : i64, 127 : i64, 4448 : i64]],
// CHECK-SAME:   nkim.psum_fragmentation = 1.906000e-01 : f64,
// CHECK-SAME:   nkim.psum_banks_used = 3 : i64, nkim.rotating_tensors = 1 : i64}
// CHECK:        %u = nisa.alloc copy(%i) alignment=64 {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.copies = 2 : i64, nkim.copy_stride = 1024 : i64}
// CHECK:        %p2 = nisa.alloc alignment=4 {nkim.partition = 0 : i64, nkim.offset = 2048 : i64, nkim.bank = 1 : i64}
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @k() {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %a = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a, value=f32 %zero) engine=vector
    nisa.release %a : memref<128x512xf32, #nisa.mem<sbuf>>
    scf.for %i = %c0 to %c2 step %c1 {
      %u = nisa.alloc : memref<128x256xf32, #nisa.mem<sbuf>>
      nisa.memset(dst=memref<128x256xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector
    } {nki.range = "affine"}
    %q = nisa.alloc {nkim.address = [32, 4096]} : memref<32x64xf32, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<32x64xf32, #nisa.mem<sbuf>> %q, value=f32 %zero) engine=vector
    %p = nisa.alloc : memref<128x300xf32, #nisa.mem<psum>>
    %p2 = nisa.alloc : memref<128x600xf32, #nisa.mem<psum>>
    nisa.release %p : memref<128x300xf32, #nisa.mem<psum>>
    nisa.release %p2 : memref<128x600xf32, #nisa.mem<psum>>
    func.return
  }
}
