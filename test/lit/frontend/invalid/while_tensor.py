# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
# Beta 1: a `while` on a tile is a located error (no dynamic control flow on tile values).
from nki_mlir import compat

compat.install()
import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def k(a):
    t = nl.load(a)
    while t:
        pass
    return a

# CHECK: while_tensor.py:13:11: unsupported construct: a tensor's value is not known at compile time, so it cannot be used as a condition; if/while conditions must be compile-time values [err_dynamic_control_flow_not_supported]
# CHECK-NEXT: {{^}}    while t:
# CHECK-NEXT: {{^}}          ^
