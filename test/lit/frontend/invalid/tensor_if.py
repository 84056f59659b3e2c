# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    if t:
        pass
    return a

# CHECK: tensor_if.py:10:8: unsupported construct: a tensor's value is not known at compile time, so it cannot be used as a condition
# CHECK-NEXT: {{^}}    if t:
# CHECK-NEXT: {{^}}       ^
