// lower-nki-to-nisa on nki.collectives: nki.collective -> nisa.collective on the dma engine,
// every property kept.
// RUN: %nki-opt %s -p lower-nki-to-nisa | filecheck %s

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @ring(%x: memref<64x8xf32, #nisa.mem<shared_hbm>>, %out: memref<64x8xf32, #nisa.mem<shared_hbm>>) {
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %out, kind=permute_implicit, groups=[[0, 1, 2, 3]], channel=0)
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %out, kind=all_reduce, groups=[[0, 1]], op=add)
    func.return
  }
}

// CHECK-LABEL: func.func @ring
// CHECK:      nisa.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %out, kind=permute_implicit, groups=[[0, 1, 2, 3]], channel=0) engine=dma
// CHECK-NEXT: nisa.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %out, kind=all_reduce, groups=[[0, 1]], op=add) engine=dma
// CHECK-NOT:  nki.
