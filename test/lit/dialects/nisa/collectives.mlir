// nki.collectives in the nisa dialect: nisa.collective on the DMA queue (SBUF or HBM
// tensors, never mixed).  Round-tripped custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @collectives(%x: memref<64x8xf32, #nisa.mem<shared_hbm>>) {
    %a = nisa.alloc alignment=64 : memref<128x16xbf16, #nisa.mem<sbuf>>
    %b = nisa.alloc alignment=64 : memref<128x64xbf16, #nisa.mem<sbuf>>
    %r = nisa.alloc : memref<64x8xf32, #nisa.mem<shared_hbm>>
    nisa.collective(src=memref<128x16xbf16, #nisa.mem<sbuf>> %a, dst=memref<128x64xbf16, #nisa.mem<sbuf>> %b, kind=all_gather, groups=[[0, 1, 2, 3]], collective_dim=1) engine=dma
    nisa.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=all_to_all, groups=[[0, 1], [2, 3]], collective_dim=0) engine=dma
    func.return
  }
}

// CHECK-LABEL: func.func @collectives
// CHECK:      nisa.collective(src=memref<128x16xbf16, #nisa.mem<sbuf>> %a, dst=memref<128x64xbf16, #nisa.mem<sbuf>> %b, kind=all_gather, groups=[[0, 1, 2, 3]], collective_dim=1) engine=dma
// CHECK-NEXT: nisa.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=all_to_all, groups=[[0, 1], [2, 3]], collective_dim=0) engine=dma
