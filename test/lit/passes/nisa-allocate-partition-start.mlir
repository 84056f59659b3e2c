// nisa-allocate: partition-start rules for direct allocation (nki_spec.md 2.2).  A tensor
// of P partitions may start at partition 0 (P > 64), 0 or 64 (32 < P <= 64), or 0, 32,
// 64 or 96 (P <= 32).  Legal starts are honoured exactly; tensors on disjoint partitions
// may share bytes, automatic tensors (which start at partition 0 and span their P
// partitions) avoid the pinned ones they share partitions with.  The illegal starts are
// in nisa-allocate-address-conflict.mlir.
// RUN: %nki-opt %s -p nisa-allocate | filecheck %s

// Peaks per partition: 0..31 hold a32 up to 3584, the others end with f at 3072.
// CHECK:  nkim.sbuf_partition_peak_bytes = {{\[}}[0 : i64, 31 : i64, 3584 : i64], [32 : i64, 127 : i64, 3072 : i64]]
// CHECK-LABEL: func.func @legal_starts
// CHECK:  %q0 = nisa.alloc alignment=64 {nkim.address = [0 : i64, 0 : i64], nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK:  %q1 = nisa.alloc alignment=64 {nkim.address = [32 : i64, 0 : i64], nkim.partition = 32 : i64, nkim.offset = 0 : i64}
// CHECK:  %q2 = nisa.alloc alignment=64 {nkim.address = [64 : i64, 0 : i64], nkim.partition = 64 : i64, nkim.offset = 0 : i64}
// CHECK:  %q3 = nisa.alloc alignment=64 {nkim.address = [96 : i64, 0 : i64], nkim.partition = 96 : i64, nkim.offset = 0 : i64}
// CHECK:  %h0 = nisa.alloc alignment=64 {nkim.address = [0 : i64, 1024 : i64], nkim.partition = 0 : i64, nkim.offset = 1024 : i64}
// CHECK:  %h1 = nisa.alloc alignment=64 {nkim.address = [64 : i64, 1024 : i64], nkim.partition = 64 : i64, nkim.offset = 1024 : i64}
// CHECK:  %f = nisa.alloc alignment=64 {nkim.address = [0 : i64, 2048 : i64], nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
// The 32-partition automatic tensor lies on partitions 0..31: after q0, h0 and f.
// CHECK:  %a32 = nisa.alloc alignment=64 {nkim.partition = 0 : i64, nkim.offset = 3072 : i64}
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @legal_starts() {
    %q0 = nisa.alloc {nkim.address = [0, 0]} : memref<32x256xf32, #nisa.mem<sbuf>>
    %q1 = nisa.alloc {nkim.address = [32, 0]} : memref<32x256xf32, #nisa.mem<sbuf>>
    %q2 = nisa.alloc {nkim.address = [64, 0]} : memref<32x256xf32, #nisa.mem<sbuf>>
    %q3 = nisa.alloc {nkim.address = [96, 0]} : memref<32x256xf32, #nisa.mem<sbuf>>
    %h0 = nisa.alloc {nkim.address = [0, 1024]} : memref<64x256xf32, #nisa.mem<sbuf>>
    %h1 = nisa.alloc {nkim.address = [64, 1024]} : memref<64x256xf32, #nisa.mem<sbuf>>
    %f = nisa.alloc {nkim.address = [0, 2048]} : memref<128x256xf32, #nisa.mem<sbuf>>
    %a32 = nisa.alloc : memref<32x128xf32, #nisa.mem<sbuf>>
    nisa.release %q0 : memref<32x256xf32, #nisa.mem<sbuf>>
    nisa.release %q1 : memref<32x256xf32, #nisa.mem<sbuf>>
    nisa.release %q2 : memref<32x256xf32, #nisa.mem<sbuf>>
    nisa.release %q3 : memref<32x256xf32, #nisa.mem<sbuf>>
    nisa.release %h0 : memref<64x256xf32, #nisa.mem<sbuf>>
    nisa.release %h1 : memref<64x256xf32, #nisa.mem<sbuf>>
    nisa.release %f : memref<128x256xf32, #nisa.mem<sbuf>>
    nisa.release %a32 : memref<32x128xf32, #nisa.mem<sbuf>>
    func.return
  }
}
