# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
# A traced kernel is Python, but a tensor has no value on the host: using one where Python
# needs an int is a located error.
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in range(t):
        pass
    return a

# CHECK: tensor_as_int.py:12:14: type error: a tensor's value is not known at compile time, so it cannot be used as a Python int (an index, a size, range()); only tensor operations apply to 't'
# CHECK-NEXT: {{^}}    for i in range(t):
# CHECK-NEXT: {{^}}             ^
