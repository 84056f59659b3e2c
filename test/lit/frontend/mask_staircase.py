# RUN: %nki-mlir compile %s::staircase --arg 128x512xf32 --arg 128x512xf32 --stage nki | filecheck %s
# A Beta 1 mask whose comparison couples both grid axes (a bound on the flat offset
# 512 * i_p + i_f < 61072: rows 0..118 whole, row 119 up to column 143) is the union of
# two boxes, one instruction each, both starting at partition 0: columns 0..143 on rows
# 0..119, columns 144..511 on rows 0..118.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def staircase(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    m = 512 * i_p + i_f < 61072
    x = nl.load(a[i_p, i_f], mask=m)
    y = nl.load(b[i_p, i_f], mask=m)
    s = nl.add(x, y, mask=m)
    nl.store(out[i_p, i_f], value=s, mask=m)
    return out

# CHECK-LABEL: func.func @staircase
# CHECK-NOT:   scf.if
# CHECK:       memref.subview %a[0, 0] [120, 144] [1, 1]
# CHECK-NEXT:  nki.dma_copy(dst=memref<120x144xf32
# CHECK:       memref.subview %a[0, 144] [119, 368] [1, 1]
# CHECK-NEXT:  nki.dma_copy(dst=memref<119x368xf32
# CHECK:       nki.binary(x=memref<120x144xf32{{.*}}fn=add
# CHECK:       nki.binary(x=memref<119x368xf32{{.*}}fn=add
# CHECK:       nki.store(dst=memref<120x144xf32
# CHECK:       nki.store(dst=memref<119x368xf32
# CHECK-NOT:   nki.store
