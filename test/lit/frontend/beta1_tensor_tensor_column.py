# RUN: %nki-mlir compile %s::column_scale --arg 128x512xf32 --arg 128x1xf32 --stage nki | filecheck %s
# NKI Beta 1 front: nisa.tensor_tensor with a [P, 1] operand reads it through a stride-0
# free-dim access pattern (the same view as Beta 2's t.broadcast(1, F)).
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def column_scale(a, s):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    col = nl.load(s)
    nl.store(out, nisa.tensor_tensor(x, col, nl.multiply))
    return out

# CHECK: %[[X:.*]] = nki.load(src={{.*}} %a)
# CHECK: %[[COL:.*]] = nki.load(src={{.*}} %s) : memref<128x1xf32, #nisa.mem<sbuf>>
# CHECK: %[[B:.*]] = memref.reinterpret_cast %[[COL]] to offset: [0], sizes: [128, 512], strides: [1, 0]
# CHECK: %[[R:.*]] = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
# CHECK: nki.tensor_tensor(dst={{.*}} %[[R]], data1={{.*}} %[[X]], data2=memref<128x512xf32, strided<[1, 0]>, #nisa.mem<sbuf>> %[[B]], op=multiply)
