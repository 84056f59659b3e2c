// nki.collectives in the nki dialect (dialects/isa_collective.py): one nki.collective op per
// (src, dst) pair; kind says which collective, groups the replica group, op the reduction,
// collective_dim / pairs / channel / src1 / metadata what that kind needs.  Round-tripped
// custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @collectives(%x: memref<64x8xf32, #nisa.mem<shared_hbm>>, %y: memref<64x8xf32, #nisa.mem<shared_hbm>>, %m: memref<3x4xui32, #nisa.mem<shared_hbm>>, %f: memref<64xf32, #nisa.mem<shared_hbm>>) {
    %r = nki.ndarray() : memref<64x8xf32, #nisa.mem<shared_hbm>>
    %g = nki.ndarray() : memref<256x8xf32, #nisa.mem<shared_hbm>>
    %s = nki.ndarray() : memref<16x8xf32, #nisa.mem<shared_hbm>>
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=all_reduce, groups=[[0, 1, 2, 3]], op=add)
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<256x8xf32, #nisa.mem<shared_hbm>> %g, kind=all_gather, groups=[[0, 1, 2, 3]], collective_dim=0, priority=1)
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<16x8xf32, #nisa.mem<shared_hbm>> %s, kind=reduce_scatter, groups=[[0, 1, 2, 3]], op=maximum, collective_dim=0)
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, src1=memref<64x8xf32, #nisa.mem<shared_hbm>> %y, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=permute_implicit_reduce, groups=[[0, 1], [2, 3]], op=minimum, channel=1)
    nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=permute, groups=[[0, 1, 2, 3]], pairs=[[0, 1], [1, 0]])
    nki.collective(src=memref<64xf32, #nisa.mem<shared_hbm>> %f, dst=memref<64xf32, #nisa.mem<shared_hbm>> %f, metadata=memref<3x4xui32, #nisa.mem<shared_hbm>> %m, kind=all_to_all_v, groups=[[0, 1, 2, 3]])
    func.return
  }
}

// CHECK-LABEL: func.func @collectives
// CHECK:      nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=all_reduce, groups=[[0, 1, 2, 3]], op=add)
// CHECK-NEXT: nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<256x8xf32, #nisa.mem<shared_hbm>> %g, kind=all_gather, groups=[[0, 1, 2, 3]], collective_dim=0, priority=1)
// CHECK-NEXT: nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<16x8xf32, #nisa.mem<shared_hbm>> %s, kind=reduce_scatter, groups=[[0, 1, 2, 3]], op=maximum, collective_dim=0)
// CHECK-NEXT: nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, src1=memref<64x8xf32, #nisa.mem<shared_hbm>> %y, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=permute_implicit_reduce, groups=[[0, 1], [2, 3]], op=minimum, channel=1)
// CHECK-NEXT: nki.collective(src=memref<64x8xf32, #nisa.mem<shared_hbm>> %x, dst=memref<64x8xf32, #nisa.mem<shared_hbm>> %r, kind=permute, groups=[[0, 1, 2, 3]], pairs=[[0, 1], [1, 0]])
// CHECK-NEXT: nki.collective(src=memref<64xf32, #nisa.mem<shared_hbm>> %f, dst=memref<64xf32, #nisa.mem<shared_hbm>> %f, metadata=memref<3x4xui32, #nisa.mem<shared_hbm>> %m, kind=all_to_all_v, groups=[[0, 1, 2, 3]])
