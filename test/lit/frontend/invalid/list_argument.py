# RUN: not %nki-mlir compile %s::k --arg 128x512xf32 --const shape=[128,512] 2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a, shape):
    pass
    return a

# CHECK: list_argument.py:8:1: type error: kernel argument 'shape' is a list; list arguments are not accepted (NKI 0.3+), pass a tuple instead
# CHECK-NEXT: {{^}}def k(a, shape):
# CHECK-NEXT: {{^}}^
