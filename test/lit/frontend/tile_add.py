# RUN: %nki-mlir compile %s::tile_add --arg 256x1024xf32 --arg 256x1024xf32 --stage nki | filecheck %s
# RUN: %nki-mlir compile %s::tile_add --arg 256x1024xf32 --arg 256x1024xf32 --stage nisa | filecheck %s --check-prefix=NISA
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tile_add(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        for j in nl.sequential_range(cols // 512):
            ta = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=a[i * 128:(i + 1) * 128, nl.ds(j * 512, 512)])
            nisa.dma_copy(dst=tb, src=b[i * 128:(i + 1) * 128, nl.ds(j * 512, 512)])
            nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, nl.ds(j * 512, 512)], src=ta)
    return out

# CHECK-LABEL: func.func @tile_add(%a: memref<256x1024xf32, #nisa.mem<shared_hbm>>, %b: memref<256x1024xf32, #nisa.mem<shared_hbm>>) -> memref<256x1024xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["out"]}
# CHECK:       %out = nki.ndarray(name=out) : memref<256x1024xf32, #nisa.mem<shared_hbm>>
# CHECK:       scf.for %i =
# CHECK:         scf.for %j =
# CHECK:           %ta = nki.ndarray(name=ta) : memref<128x512xf32, #nisa.mem<sbuf>>
# CHECK:           %[[R:.*]] = arith.muli %i, %c128
# CHECK:           %[[C:.*]] = arith.muli %j, %c512
# CHECK:           %[[V:.*]] = memref.subview %a[%[[R]], %[[C]]] [128, 512] [1, 1] : memref<256x1024xf32, #nisa.mem<shared_hbm>> to memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>
# CHECK:           nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %ta, src=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>> %[[V]])
# CHECK:           nki.tensor_tensor(dst={{.*}} %ta, data1={{.*}} %ta, data2={{.*}} %tb, op=add)
# CHECK-COUNT-1:   nki.dma_copy(dst=memref<128x512xf32, strided<[1024, 1], offset: ?>, #nisa.mem<shared_hbm>>
# CHECK:         } {nki.range = "sequential"}
# CHECK:       } {nki.range = "affine"}
# CHECK:       func.return %out

# NISA:      nisa.alloc alignment=64 {nkim.name = "ta", nkim.partition = 0 : i64, nkim.offset = 0 : i64}
# NISA:      nisa.alloc alignment=64 {nkim.name = "tb", nkim.partition = 0 : i64, nkim.offset = 2048 : i64}
# NISA:      nisa.dma_copy({{.*}}) engine=dma
# NISA:      nisa.tensor_tensor_arith({{.*}}op=add) engine=vector
# NISA-NOT:  nki.{{[a-z_]+}}(
