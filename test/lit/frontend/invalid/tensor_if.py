# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
# Beta 1: a tile's value exists only on the device, so branching on it is a located error
# (an NKI 0.x tensor has Python's default truth instead: see test_tensor_truth.py).
from nki_mlir import compat

compat.install()
import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def k(a):
    t = nl.load(a)
    if t:
        pass
    return a

# CHECK: tensor_if.py:14:8: unsupported construct: a tensor's value is not known at compile time, so it cannot be used as a condition
# CHECK-NEXT: {{^}}    if t:
# CHECK-NEXT: {{^}}       ^
