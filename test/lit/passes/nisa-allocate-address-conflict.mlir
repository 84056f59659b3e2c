// nisa-allocate, negative: direct allocation (nkim.address = [partition, byte_offset],
// from nl.ndarray(..., address=(p, off))) that breaks a placement rule.  Each error is
// located at the alloc and names the tensors involved.  With --verify-diagnostics the
// messages go to stdout, one per chunk; without it the first one ends nki-opt with
// exit status 1.
// RUN: %nki-opt %s --split-input-file -p nisa-allocate --verify-diagnostics | filecheck %s
// RUN: not %nki-opt %s --split-input-file -p nisa-allocate 2>&1 | filecheck %s --check-prefix=EXIT

// Two pinned tensors share bytes while both are live.
func.func @overlap() {
  %a = nisa.alloc {nkim.name = "a", nkim.address = [0, 0]} : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":4:4)
  %b = nisa.alloc {nkim.name = "b", nkim.address = [0, 1024]} : memref<128x512xbf16, #nisa.mem<sbuf>> loc("k.py":5:4)
  nisa.release %a : memref<128x512xf32, #nisa.mem<sbuf>>
  nisa.release %b : memref<128x512xbf16, #nisa.mem<sbuf>>
  func.return
}
// CHECK: {{^}}k.py:5:4: invalid address: tensor 'b' ([128, 512] bfloat16, 1024 bytes per partition, k.py:5): address=(0, 1024) overlaps tensor 'a' ([128, 512] float32, 2048 bytes per partition, k.py:4) at address=(0, 0) while both are live
// EXIT:  k.py:5:4: invalid address: tensor 'b'
// EXIT-NOT: Traceback
// EXIT-NOT: illegal

// -----

// A tensor of more than 64 partitions must start at partition 0.
func.func @start_partition_128() {
  %a = nisa.alloc {nkim.name = "wide", nkim.address = [32, 0]} : memref<128x16xf32, #nisa.mem<sbuf>> loc("k.py":7:4)
  func.return
}
// CHECK: {{^}}k.py:7:4: invalid address: tensor 'wide' ([128, 16] float32, 64 bytes per partition, k.py:7): address=(32, 0) is illegal: a tensor of 128 partitions must start at partition 0

// -----

// 32 < P <= 64: partition 0 or 64.
func.func @start_partition_64() {
  %a = nisa.alloc {nkim.name = "half", nkim.address = [32, 0]} : memref<64x16xf32, #nisa.mem<sbuf>> loc("k.py":8:4)
  func.return
}
// CHECK: {{^}}k.py:8:4: invalid address: tensor 'half' ([64, 16] float32, 64 bytes per partition, k.py:8): address=(32, 0) is illegal: a tensor of 64 partitions must start at partition 0 or 64

// -----

// P <= 32: partition 0, 32, 64 or 96.
func.func @start_partition_32() {
  %a = nisa.alloc {nkim.name = "quarter", nkim.address = [16, 0]} : memref<32x16xf32, #nisa.mem<sbuf>> loc("k.py":9:4)
  func.return
}
// CHECK: {{^}}k.py:9:4: invalid address: tensor 'quarter' ([32, 16] float32, 64 bytes per partition, k.py:9): address=(16, 0) is illegal: a tensor of 32 partitions must start at partition 0, 32, 64 or 96

// -----

// PSUM tensors start on a bank boundary (a multiple of 2048 bytes).
func.func @psum_bank() {
  %a = nisa.alloc {nkim.name = "acc", nkim.address = [0, 1024]} : memref<128x128xf32, #nisa.mem<psum>> loc("k.py":10:4)
  func.return
}
// CHECK: {{^}}k.py:10:4: invalid address: tensor 'acc' ([128, 128] float32, 512 bytes per partition, k.py:10): address=(0, 1024) is illegal: PSUM tensors must start on a bank boundary (a multiple of 2048 bytes per partition)

// -----

// The tensor must fit in the memory of the target.
func.func @out_of_range() {
  %a = nisa.alloc {nkim.name = "late", nkim.address = [0, 212000]} : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":11:4)
  func.return
}
// CHECK: {{^}}k.py:11:4: invalid address: tensor 'late' ([128, 512] float32, 2048 bytes per partition, k.py:11): address=(0, 212000) is out of range: bytes 212000..214047 per partition exceed the SBUF capacity of 212984 bytes per partition on trn2

// -----

func.func @psum_out_of_range() {
  %a = nisa.alloc {nkim.name = "acc", nkim.address = [0, 16384]} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":12:4)
  func.return
}
// CHECK: {{^}}k.py:12:4: invalid address: tensor 'acc' ([128, 512] float32, 2048 bytes per partition, k.py:12): address=(0, 16384) is out of range: bytes 16384..18431 per partition exceed the PSUM capacity of 16384 bytes per partition on trn2

// -----

// The address must be a [partition, byte_offset] pair.
func.func @malformed() {
  %a = nisa.alloc {nkim.address = [0]} : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":13:4)
  func.return
}
// CHECK: {{^}}k.py:13:4: invalid address: nkim.address must be [partition, byte_offset], got [0 : i64]

// -----

// A pinned tensor in a loop body is live only there (not multi-buffered: pinned
// tensors keep their address), but a pinned tensor used in the loop is live over all
// of it: they conflict.
func.func @pinned_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %acc = nisa.alloc {nkim.name = "acc", nkim.address = [0, 0]} : memref<128x64xf32, #nisa.mem<sbuf>> loc("k.py":20:4)
  scf.for %i = %c0 to %c4 step %c1 {
    %t = nisa.alloc {nkim.name = "t", nkim.address = [0, 128]} : memref<128x64xf32, #nisa.mem<sbuf>> loc("k.py":22:8)
    nisa.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, value=f32 %zero) engine=vector
    nisa.tensor_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %acc, src=memref<128x64xf32, #nisa.mem<sbuf>> %t) engine=vector
  } {nki.range = "affine"}
  func.return
}
// CHECK: {{^}}k.py:22:8: invalid address: tensor 't' ([128, 64] float32, 256 bytes per partition, k.py:22): address=(0, 128) overlaps tensor 'acc' ([128, 64] float32, 256 bytes per partition, k.py:20) at address=(0, 0) while both are live
