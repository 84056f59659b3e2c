// nisa-allocate: a tensor is live from its first use (its alloc is sunk below the last
// memory-touching op before that use); when SBUF overflows, an elementwise result is
// written into its dying input of the same type and tensors of <= 64 partitions are
// spread over their legal start partitions.  T = 128x16384xf32 = 65536 bytes per
// partition: 3 fit in trn2's 212984, 4 do not.
// RUN: %nki-opt %s --split-input-file -p nisa-allocate | filecheck %s

// res is made first and written last: sunk below the two instructions before its first
// use, it shares xs's bytes (xs is dead by then).
// CHECK-LABEL: func.func @sunk
// CHECK:         %xs = nisa.alloc alignment=64 {nkim.name = "xs", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK-NEXT:    nisa.dma_copy
// CHECK-NEXT:    %t = nisa.alloc alignment=64 {nkim.name = "t", nkim.partition = 0 : i64, nkim.offset = 65536 : i64}
// CHECK-NEXT:    nisa.tensor_scalar_arith
// CHECK-NEXT:    %res = nisa.alloc alignment=64 {nkim.name = "res", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
// CHECK-NEXT:    nisa.tensor_scalar_arith
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @sunk(%in: memref<128x16384xf32, #nisa.mem<shared_hbm>>) {
    %two = arith.constant 2.0 : f32
    %res = nisa.alloc {nkim.name = "res"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    %xs = nisa.alloc {nkim.name = "xs"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, src=memref<128x16384xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    %t = nisa.alloc {nkim.name = "t"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.tensor_scalar_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %t, src=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, operand0=f32 %two, op0=multiply) engine=vector
    nisa.tensor_scalar_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %res, src=memref<128x16384xf32, #nisa.mem<sbuf>> %t, operand0=f32 %two, op0=multiply) engine=vector
    nisa.dma_copy(dst=memref<128x16384xf32, #nisa.mem<shared_hbm>> %in, src=memref<128x16384xf32, #nisa.mem<sbuf>> %res) engine=dma
    func.return
  }
}

// -----

// xs, ys, ws live together (3 T) and u = 2 * xs is xs's last use: u is written into xs
// (its alloc is erased, its uses read xs), so 3 T are live instead of 4.  Then the half
// tiles a and b, live with two full tiles, sit side by side on partitions 0..63 and
// 64..127 (at partition 0 both, 4 T would be needed).
// CHECK-LABEL: func.func @short
// CHECK-NOT:     nkim.name = "u"
// CHECK:         nisa.tensor_scalar_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, src=memref<128x16384xf32, #nisa.mem<sbuf>> %xs
// CHECK:         %a = nisa.alloc alignment=64 {nkim.name = "a", nkim.partition = 0 : i64, nkim.offset = [[OFF:[0-9]+]] : i64}
// CHECK:         %b = nisa.alloc alignment=64 {nkim.name = "b", nkim.partition = 64 : i64, nkim.offset = [[OFF]] : i64}
// CHECK:         nisa.tensor_tensor_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, lhs=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, rhs=memref<128x16384xf32, #nisa.mem<sbuf>> %ys
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @short(%in: memref<128x16384xf32, #nisa.mem<shared_hbm>>) {
    %two = arith.constant 2.0 : f32
    %xs = nisa.alloc {nkim.name = "xs"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, src=memref<128x16384xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    %ys = nisa.alloc {nkim.name = "ys"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %ys, src=memref<128x16384xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    %ws = nisa.alloc {nkim.name = "ws"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.dma_copy(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %ws, src=memref<128x16384xf32, #nisa.mem<shared_hbm>> %in) engine=dma
    %u = nisa.alloc {nkim.name = "u"} : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.tensor_scalar_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %u, src=memref<128x16384xf32, #nisa.mem<sbuf>> %xs, operand0=f32 %two, op0=multiply) engine=vector
    nisa.tensor_tensor_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %u, lhs=memref<128x16384xf32, #nisa.mem<sbuf>> %u, rhs=memref<128x16384xf32, #nisa.mem<sbuf>> %ws, op=add) engine=vector
    %a = nisa.alloc {nkim.name = "a"} : memref<64x16384xf32, #nisa.mem<sbuf>>
    %u_lo = memref.subview %u[0, 0] [64, 16384] [1, 1] : memref<128x16384xf32, #nisa.mem<sbuf>> to memref<64x16384xf32, strided<[16384, 1]>, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<64x16384xf32, #nisa.mem<sbuf>> %a, src=memref<64x16384xf32, strided<[16384, 1]>, #nisa.mem<sbuf>> %u_lo) engine=vector
    %b = nisa.alloc {nkim.name = "b"} : memref<64x16384xf32, #nisa.mem<sbuf>>
    %y_lo = memref.subview %ys[0, 0] [64, 16384] [1, 1] : memref<128x16384xf32, #nisa.mem<sbuf>> to memref<64x16384xf32, strided<[16384, 1]>, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<64x16384xf32, #nisa.mem<sbuf>> %b, src=memref<64x16384xf32, strided<[16384, 1]>, #nisa.mem<sbuf>> %y_lo) engine=vector
    nisa.tensor_tensor_arith(dst=memref<64x16384xf32, #nisa.mem<sbuf>> %a, lhs=memref<64x16384xf32, #nisa.mem<sbuf>> %a, rhs=memref<64x16384xf32, #nisa.mem<sbuf>> %b, op=add) engine=vector
    nisa.tensor_tensor_arith(dst=memref<128x16384xf32, #nisa.mem<sbuf>> %u, lhs=memref<128x16384xf32, #nisa.mem<sbuf>> %u, rhs=memref<128x16384xf32, #nisa.mem<sbuf>> %ys, op=add) engine=vector
    nisa.tensor_copy(dst=memref<64x16384xf32, strided<[16384, 1]>, #nisa.mem<sbuf>> %u_lo, src=memref<64x16384xf32, #nisa.mem<sbuf>> %a) engine=vector
    func.return
  }
}
