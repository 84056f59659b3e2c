# RUN: %nki-mlir compile %s::views --arg 500x64xf32 --arg 128x1xi32 --arg 1x64xf32 --stage nki | filecheck %s
# RUN: %nki-mlir compile %s::views --arg 500x64xf32 --arg 128x1xi32 --arg 1x64xf32 --stage nisa | filecheck %s --check-prefix=NISA
# NkiTensor views (nki_spec.md 2.5): slice/select -> memref.subview; permute, broadcast,
# reshape, ap -> memref.reinterpret_cast with offsets/strides over the underlying storage
# (views of views compose); view(dtype) -> nki.view_dtype; ap(vector_offset=) -> an
# indirect dma_copy (nki.dma_copy_indirect).
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def views(table, idx, g):
    ix = nl.ndarray((128, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    rows = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=rows, src=table.ap([[64, 128], [1, 64]], offset=0, vector_offset=ix, indirect_dim=0))
    gb = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=gb, src=g.broadcast(0, 128))
    t = nl.ndarray((128, 8, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t, data1=rows.reshape((128, 8, 8)).permute((0, 2, 1)),
                       data2=gb.reshape((128, 8, 8)), op=nl.add)
    out = nl.ndarray((128, 8, 16), nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t.view(nl.bfloat16))
    return out

# CHECK-LABEL: func.func @views
# CHECK:       %[[TAB:.*]] = memref.reinterpret_cast %table to offset: [0], sizes: [500, 64], strides: [64, 1] : memref<500x64xf32, #nisa.mem<shared_hbm>> to memref<500x64xf32, strided<[64, 1]>, #nisa.mem<shared_hbm>>
# CHECK-NEXT:  nki.dma_copy_indirect(dst=memref<128x64xf32, #nisa.mem<sbuf>> %rows, src={{.*}} %[[TAB]], src_index=memref<128x1xi32, #nisa.mem<sbuf>> %ix)
# CHECK:       %[[B:.*]] = memref.reinterpret_cast %g to offset: [0], sizes: [128, 64], strides: [0, 1] : memref<1x64xf32, #nisa.mem<shared_hbm>> to memref<128x64xf32, strided<[0, 1]>, #nisa.mem<shared_hbm>>
# CHECK-NEXT:  nki.dma_copy(dst={{.*}} %gb, src=memref<128x64xf32, strided<[0, 1]>, #nisa.mem<shared_hbm>> %[[B]])
# CHECK:       %[[R:.*]] = memref.reinterpret_cast %rows to offset: [0], sizes: [128, 8, 8], strides: [64, 8, 1]
# CHECK-NEXT:  %[[P:.*]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [128, 8, 8], strides: [64, 1, 8] : memref<128x8x8xf32, strided<[64, 8, 1]>, #nisa.mem<sbuf>> to memref<128x8x8xf32, strided<[64, 1, 8]>, #nisa.mem<sbuf>>
# CHECK:       nki.tensor_tensor(dst={{.*}} %t, data1=memref<128x8x8xf32, strided<[64, 1, 8]>, #nisa.mem<sbuf>> %[[P]]
# CHECK:       %[[V:.*]] = nki.view_dtype(source=memref<128x8x8xf32, #nisa.mem<sbuf>> %t) : memref<128x8x16xbf16, strided<[128, 16, 1]>, #nisa.mem<sbuf>>
# CHECK-NEXT:  nki.dma_copy(dst={{.*}} %out, src={{.*}} %[[V]])

# NISA:      nisa.dma_copy_indirect({{.*}}src_index={{.*}}, oob_is_err=true) engine=dma
# NISA:      nisa.view_dtype(
# NISA-NOT:  nki.{{[a-z_]+}}(
