// Verifier checks of nki_spec.md section 6 on the core nisa instructions, one per chunk.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Item 9: a 32-partition view must start at partition 0, 32, 64 or 96.
func.func @start_partition(%d: memref<32x8xf32, #nisa.mem<sbuf>>) {
  %t = nisa.alloc {nkim.partition = 0 : i64, nkim.offset = 0 : i64} : memref<128x8xf32, #nisa.mem<sbuf>>
  %v = memref.subview %t[16, 0] [32, 8] [1, 1] : memref<128x8xf32, #nisa.mem<sbuf>> to memref<32x8xf32, strided<[8, 1], offset: 128>, #nisa.mem<sbuf>>
  nisa.tensor_copy(dst=memref<32x8xf32, #nisa.mem<sbuf>> %d, src=memref<32x8xf32, strided<[8, 1], offset: 128>, #nisa.mem<sbuf>> %v) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_copy: operand 'src' covers partitions [16, 48), but an operand of 32 partitions must start at partition 0 or 32 or 64 or 96

// -----

// Item 9, placed tensor: a 64-partition alloc at partition 32.
func.func @start_partition_placed(%d: memref<64x8xf32, #nisa.mem<sbuf>>) {
  %t = nisa.alloc {nkim.partition = 32 : i64, nkim.offset = 0 : i64} : memref<64x8xf32, #nisa.mem<sbuf>>
  nisa.reciprocal(dst=memref<64x8xf32, #nisa.mem<sbuf>> %d, src=memref<64x8xf32, #nisa.mem<sbuf>> %t) engine=vector
  func.return
}
// CHECK: {{^}}nisa.reciprocal: operand 'src' covers partitions [32, 96), but an operand of 64 partitions must start at partition 0 or 64

// -----

// Item 14: GpSimd cannot access PSUM.
func.func @gpsimd_psum(%d: memref<128x8xf32, #nisa.mem<sbuf>>, %p: memref<128x8xf32, #nisa.mem<psum>>) {
  nisa.tensor_tensor_arith(dst=memref<128x8xf32, #nisa.mem<sbuf>> %d, lhs=memref<128x8xf32, #nisa.mem<psum>> %p, rhs=memref<128x8xf32, #nisa.mem<sbuf>> %d, op=pow) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.tensor_tensor_arith: operand 'lhs' is in psum, but this instruction runs on the GpSimd engine, which cannot access PSUM

// -----

// Item 23: bitvec operators need integer data.
func.func @bitvec_float(%d: memref<128x8xi32, #nisa.mem<sbuf>>, %x: memref<128x8xf32, #nisa.mem<sbuf>>) {
  %c = arith.constant 3 : i32
  nisa.tensor_scalar_arith(dst=memref<128x8xi32, #nisa.mem<sbuf>> %d, src=memref<128x8xf32, #nisa.mem<sbuf>> %x, operand0=i32 %c, op0=bitwise_and) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_scalar_arith: op0=bitwise_and is a bitvec operator working on integer bits, but operand 'data' is float32

// -----

// Item 24: the activation scale tensor is float32.
func.func @scale_bf16(%d: memref<128x8xf32, #nisa.mem<sbuf>>, %x: memref<128x8xf32, #nisa.mem<sbuf>>, %s: memref<128x1xbf16, #nisa.mem<sbuf>>) {
  %b = arith.constant 0.0 : f32
  nisa.activation(dst=memref<128x8xf32, #nisa.mem<sbuf>> %d, src=memref<128x8xf32, #nisa.mem<sbuf>> %x, bias=f32 %b, scale=memref<128x1xbf16, #nisa.mem<sbuf>> %s, op=exp) engine=scalar
  func.return
}
// CHECK: {{^}}nisa.activation: operand 'scale' must be float32 (a scalar or a [P, 1] float32 tensor), got [128, 1] bfloat16 in sbuf [err_activation_scale_invalid_type]

// -----

// Item 25: an arithmetic tensor_scalar operand tensor is float32.
func.func @operand_int(%d: memref<128x8xf32, #nisa.mem<sbuf>>, %x: memref<128x8xf32, #nisa.mem<sbuf>>, %v: memref<128x1xi32, #nisa.mem<sbuf>>) {
  nisa.tensor_scalar_arith(dst=memref<128x8xf32, #nisa.mem<sbuf>> %d, src=memref<128x8xf32, #nisa.mem<sbuf>> %x, operand0=memref<128x1xi32, #nisa.mem<sbuf>> %v, op0=add) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_scalar_arith: operand 'operand0' of the arithmetic operator add must be float32

// -----

// Item 26: memset of a float value into an integer tensor.
func.func @memset_kind(%d: memref<128x8xi32, #nisa.mem<sbuf>>) {
  %c = arith.constant 1.5 : f32
  nisa.memset(dst=memref<128x8xi32, #nisa.mem<sbuf>> %d, value=f32 %c) engine=vector
  func.return
}
// CHECK: {{^}}nisa.memset: value 1.5 is a float, but 'dst' is int32; the value must match the dtype kind

// -----

// Item 40: op0 and op1 of one class.
func.func @mixed_classes(%d: memref<128x8xi32, #nisa.mem<sbuf>>, %x: memref<128x8xi32, #nisa.mem<sbuf>>) {
  %c = arith.constant 3 : i32
  %f = arith.constant 1.0 : f32
  nisa.tensor_scalar_arith(dst=memref<128x8xi32, #nisa.mem<sbuf>> %d, src=memref<128x8xi32, #nisa.mem<sbuf>> %x, operand0=i32 %c, operand1=f32 %f, op0=bitwise_and, op1=add) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_scalar_arith: op0=bitwise_and is bitvec but op1=add is arithmetic; op0 and op1 must be of the same class

// -----

// tensor_copy on ScalarE needs NeuronCore-v3.
builtin.module attributes {nisa.target = #nisa.target<trn1>} {
  func.func @act_copy(%d: memref<128x8xf32, #nisa.mem<sbuf>>, %x: memref<128x8xf32, #nisa.mem<sbuf>>) {
    nisa.tensor_copy(dst=memref<128x8xf32, #nisa.mem<sbuf>> %d, src=memref<128x8xf32, #nisa.mem<sbuf>> %x) engine=scalar
    func.return
  }
}
// CHECK: {{^}}nisa.tensor_copy: the scalar engine (ACT) cannot run tensor_copy on trn1 (NeuronCore-v2)
