// Verifier negatives of the view / indirect-DMA ops (dialects/views.py), one per chunk.
// RUN: %nki-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The index tile must be int32 / uint32.
func.func @index_dtype(%t: memref<500x64xf32, #nisa.mem<shared_hbm>>, %g: memref<128x64xf32, #nisa.mem<sbuf>>, %i: memref<128x1xf32, #nisa.mem<sbuf>>) {
  nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %t, src_index=memref<128x1xf32, #nisa.mem<sbuf>> %i)
  func.return
}
// CHECK: nisa.dma_copy_indirect: 'src_index' must be int32 or uint32, got float32

// -----

// The indexed tensor must be in HBM (no dynamic partition selection on chip).
func.func @table_on_chip(%t: memref<128x64xf32, #nisa.mem<sbuf>>, %g: memref<128x64xf32, #nisa.mem<sbuf>>, %i: memref<128x1xi32, #nisa.mem<sbuf>>) {
  nisa.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<128x64xf32, #nisa.mem<sbuf>> %t, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %i) engine=dma
  func.return
}
// CHECK: nisa.dma_copy_indirect: the tensor indexed by 'src_index' ('src') must be in HBM

// -----

// One index per dst row.
func.func @rows(%t: memref<500x64xf32, #nisa.mem<shared_hbm>>, %g: memref<64x64xf32, #nisa.mem<sbuf>>, %i: memref<128x1xi32, #nisa.mem<sbuf>>) {
  nki.dma_copy_indirect(dst=memref<64x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %t, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %i)
  func.return
}
// CHECK: nisa.dma_copy_indirect: 'dst' has 64 rows but 'src_index' has 128 indices; they must match

// -----

// Rows must have the same element count.
func.func @row_size(%t: memref<500x32xf32, #nisa.mem<shared_hbm>>, %g: memref<128x64xf32, #nisa.mem<sbuf>>, %i: memref<128x1xi32, #nisa.mem<sbuf>>) {
  nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x32xf32, #nisa.mem<shared_hbm>> %t, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %i)
  func.return
}
// CHECK: nisa.dma_copy_indirect: a row of 'dst' has 64 elements but a row of 'src' has 32

// -----

// An index operand is required.
func.func @no_index(%t: memref<128x64xf32, #nisa.mem<shared_hbm>>, %g: memref<128x64xf32, #nisa.mem<sbuf>>) {
  nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<128x64xf32, #nisa.mem<shared_hbm>> %t)
  func.return
}
// CHECK: nisa.dma_copy_indirect: needs 'src_index' (gather) or 'dst_index' (scatter)

// -----

// oob_mode is error or skip.
func.func @oob(%t: memref<500x64xf32, #nisa.mem<shared_hbm>>, %g: memref<128x64xf32, #nisa.mem<sbuf>>, %i: memref<128x1xi32, #nisa.mem<sbuf>>) {
  nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %g, src=memref<500x64xf32, #nisa.mem<shared_hbm>> %t, src_index=memref<128x1xi32, #nisa.mem<sbuf>> %i, oob_mode=wrap)
  func.return
}
// CHECK: nisa.dma_copy_indirect: oob_mode=wrap is not supported (expected one of: error, skip)

// -----

// view_dtype keeps the byte size of the last dim.
func.func @view_bytes(%t: memref<128x64xf32, #nisa.mem<sbuf>>) {
  %v = nki.view_dtype(source=memref<128x64xf32, #nisa.mem<sbuf>> %t) : memref<128x64xbf16, #nisa.mem<sbuf>>
  func.return
}
// CHECK: nki.view_dtype: the last dim must keep its byte size: 64 x 4 bytes != 64 x 2 bytes

// -----

// view_dtype needs a contiguous last dim.
func.func @view_strided(%t: memref<128x32xf32, strided<[64, 2]>, #nisa.mem<sbuf>>) {
  %v = nisa.view_dtype(source=memref<128x32xf32, strided<[64, 2]>, #nisa.mem<sbuf>> %t) : memref<128x64xbf16, #nisa.mem<sbuf>>
  func.return
}
// CHECK: nisa.view_dtype: the last dim of the source must be contiguous (stride 1), got stride 2
