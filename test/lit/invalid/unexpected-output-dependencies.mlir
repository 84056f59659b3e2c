// err_unexpected_output_dependencies (nki_spec.md loops table, error 35): two iterations of
// an affine_range write the same location of a tensor defined outside the loop.
// RUN: %nki-opt %s --split-input-file -p nisa-schedule --verify-diagnostics | filecheck %s
// RUN: not %nki-opt %s -p nisa-schedule 2>&1 | filecheck %s --check-prefix=ERR

// Every iteration stores its tile to the same rows of out.
// CHECK: k.py:6:5: invalid kernel: tensor 'out' is written at the same location in different iterations of the affine_range loop at k.py:3; iterations of an affine_range must be independent: write a different location per iteration, or use nl.sequential_range for a loop-carried dependency [err_unexpected_output_dependencies]
// ERR: k.py:6:5: invalid kernel: tensor 'out' is written {{.*}} affine_range loop at k.py:3{{.*}}nl.sequential_range{{.*}}[err_unexpected_output_dependencies]
func.func @same_rows(%in: memref<512x64xf32, #nisa.mem<shared_hbm>>, %out: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %r = arith.muli %i, %c128 : index
    %t = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>> loc("k.py":4:5)
    %iv = memref.subview %in[%r, 0] [128, 64] [1, 1] : memref<512x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, src=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %iv) engine=dma loc("k.py":5:5)
    nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %out, src=memref<128x64xf32, #nisa.mem<sbuf>> %t) engine=dma loc("k.py":6:5)
  } {nki.range = "affine"} loc("k.py":3:3)
  func.return
}

// -----

// Overlapping windows: iteration i writes rows [64 i, 64 i + 128) of an SBUF tile defined
// outside the loop, so iterations i and i+1 share 64 rows.
// CHECK: k.py:16:5: invalid kernel: tensor 'win' is written at the same location in different iterations of the affine_range loop at k.py:14{{.*}}[err_unexpected_output_dependencies]
func.func @windows(%in: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %win = nisa.alloc {nkim.name = "win"} : memref<128x448xf32, #nisa.mem<sbuf>> loc("k.py":13:3)
  scf.for %i = %c0 to %c4 step %c1 {
    %c = arith.muli %i, %c64 : index
    %v = memref.subview %win[0, %c] [128, 128] [1, 1] : memref<128x448xf32, #nisa.mem<sbuf>> to memref<128x128xf32, strided<[448, 1], offset: ?>, #nisa.mem<sbuf>>
    nisa.memset(dst=memref<128x128xf32, strided<[448, 1], offset: ?>, #nisa.mem<sbuf>> %v, value=f32 %zero) engine=vector loc("k.py":16:5)
  } {nki.range = "affine"} loc("k.py":14:3)
  func.return
}

// -----

// Not errors: disjoint tiles per iteration, an accumulation (read-modify-write), and the
// same pattern as @same_rows in a sequential_range.
// CHECK: func.func @fine
func.func @fine(%in: memref<512x64xf32, #nisa.mem<shared_hbm>>, %out: memref<512x64xf32, #nisa.mem<shared_hbm>>, %o2: memref<128x64xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %acc = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
  scf.for %i = %c0 to %c4 step %c1 {
    %r = arith.muli %i, %c128 : index
    %t = nisa.alloc : memref<128x64xf32, #nisa.mem<sbuf>>
    %iv = memref.subview %in[%r, 0] [128, 64] [1, 1] : memref<512x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %t, src=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %iv) engine=dma
    nisa.tensor_tensor_arith(dst=memref<128x64xf32, #nisa.mem<sbuf>> %acc, lhs=memref<128x64xf32, #nisa.mem<sbuf>> %acc, rhs=memref<128x64xf32, #nisa.mem<sbuf>> %t, op=add) engine=vector
    %ov = memref.subview %out[%r, 0] [128, 64] [1, 1] : memref<512x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
    nisa.dma_copy(dst=memref<128x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>> %ov, src=memref<128x64xf32, #nisa.mem<sbuf>> %t) engine=dma
  } {nki.range = "affine"}
  scf.for %j = %c0 to %c4 step %c1 {
    nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<shared_hbm>> %o2, src=memref<128x64xf32, #nisa.mem<sbuf>> %acc) engine=dma
  } {nki.range = "sequential"}
  func.return
}
