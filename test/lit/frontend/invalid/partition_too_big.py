# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
    return a

# CHECK: partition_too_big.py:9:9: invalid kernel: nl.ndarray: the tensor has partition dimension 256, which exceeds the architecture limit of 128
# CHECK-NEXT: {{^}}    t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
# CHECK-NEXT: {{^}}        ^
