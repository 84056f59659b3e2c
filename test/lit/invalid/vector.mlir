// Verifier negatives of the vector family (dialects/isa_vector.py), one per chunk.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// bn_stats reads at most nl.tile_size.bn_stats_fmax = 512 elements per partition.
func.func @bn_stats_fmax(%d: memref<128x6xf32, #nisa.mem<sbuf>>, %x: memref<128x600xf32, #nisa.mem<sbuf>>) {
  nisa.bn_stats(dst=memref<128x6xf32, #nisa.mem<sbuf>> %d, data=memref<128x600xf32, #nisa.mem<sbuf>> %x) engine=vector
  func.return
}
// CHECK: {{^}}nisa.bn_stats: 'data' has 600 free elements per partition, more than bn_stats_fmax=512

// -----

// bn_aggr reads (count, mean, var*count) triples.
func.func @bn_aggr_triples(%d: memref<128x2xf32, #nisa.mem<sbuf>>, %x: memref<128x7xf32, #nisa.mem<sbuf>>) {
  nki.bn_aggr(dst=memref<128x2xf32, #nisa.mem<sbuf>> %d, data=memref<128x7xf32, #nisa.mem<sbuf>> %x)
  func.return
}
// CHECK: {{^}}nisa.bn_aggr: 'data' has 7 elements per partition, not a multiple of 3

// -----

// exponential is NeuronCore-v4 (trn3) only.
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @exponential_trn2(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %f: f32) {
    nisa.exponential(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, src=memref<128x64xf32, #nisa.mem<sbuf>> %d, max_value=f32 %f) engine=vector
    func.return
  }
}
// CHECK: {{^}}nisa.exponential: this instruction needs trn3 (NeuronCore-v4) or newer, but the target is trn2

// -----

// activate2 accepts six (op0, op1) pairs only.
module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @activate2_pair(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %f: f32) {
    nisa.activate2(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, data=memref<128x64xf32, #nisa.mem<sbuf>> %d, imm0=f32 %f, imm1=f32 %f, op=exp, op0=add, op1=multiply) engine=scalar
    func.return
  }
}
// CHECK: {{^}}nisa.activate2: (op0, op1) = (add, multiply) is not supported; the allowed pairs are (multiply, add), (multiply, subtract), (multiply, bypass), (add, bypass), (subtract, bypass), (bypass, bypass)

// -----

// tensor_partition_reduce runs on GpSimd, which cannot read PSUM.
func.func @partition_reduce_psum(%d: memref<1x64xf32, #nisa.mem<sbuf>>, %x: memref<128x64xf32, #nisa.mem<psum>>) {
  nisa.tensor_partition_reduce(dst=memref<1x64xf32, #nisa.mem<sbuf>> %d, data=memref<128x64xf32, #nisa.mem<psum>> %x, op=add) engine=gpsimd
  func.return
}
// CHECK: {{^}}nisa.tensor_partition_reduce: operand 'data' is a tensor in psum, but this instruction only accepts sbuf tensors

// -----

// load_reduce seeds the VectorE accumulators from reduce_init, which must be given.
func.func @scalar_reduce_load(%d: memref<128x64xf32, #nisa.mem<sbuf>>, %r: memref<128x1xf32, #nisa.mem<sbuf>>, %f: f32) {
  nisa.tensor_scalar_reduce(dst=memref<128x64xf32, #nisa.mem<sbuf>> %d, data=memref<128x64xf32, #nisa.mem<sbuf>> %d, operand0=f32 %f, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %r, op0=add, reduce_op=add, reduce_cmd=load_reduce) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_scalar_reduce: reduce_cmd=load_reduce needs 'reduce_init' (the value loaded into the accumulators)

// -----

// tensor_scalar_cumulative has no int32/uint32 path.
func.func @cumulative_int32(%d: memref<128x64xi32, #nisa.mem<sbuf>>, %f: f32) {
  nisa.tensor_scalar_cumulative(dst=memref<128x64xi32, #nisa.mem<sbuf>> %d, src=memref<128x64xi32, #nisa.mem<sbuf>> %d, imm0=f32 %f, op0=add, op1=add) engine=vector
  func.return
}
// CHECK: {{^}}nisa.tensor_scalar_cumulative: 'src' is int32; int32/uint32 are not supported by this instruction

// -----

// scalar_tensor_tensor takes arithmetic operators only.
func.func @stt_bitvec(%d: memref<128x64xi32, #nisa.mem<sbuf>>, %f: f32) {
  nisa.scalar_tensor_tensor(dst=memref<128x64xi32, #nisa.mem<sbuf>> %d, data=memref<128x64xi32, #nisa.mem<sbuf>> %d, operand0=f32 %f, operand1=memref<128x64xi32, #nisa.mem<sbuf>> %d, op0=bitwise_and, op1=add) engine=vector
  func.return
}
// CHECK: {{^}}nisa.scalar_tensor_tensor: op0=bitwise_and is a bitvec operator; this instruction takes arithmetic operators only
