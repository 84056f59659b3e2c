# RUN: not %nki-mlir compile %s::k --arg 128x8xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    u = nl.ndarray((32, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t[16:48, :])
    return a

# CHECK: start_partition.py:12:5: invalid kernel: nisa.tensor_copy: operand 'src' covers partitions [16, 48), but an operand of 32 partitions must start at partition 0 or 32 or 64 or 96
# CHECK-NEXT: {{^}}    nisa.tensor_copy(dst=u, src=t[16:48, :])
# CHECK-NEXT: {{^}}    ^
