# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    if a.dtype is nl.float32:
        pass
    return a

# CHECK: is_compare.py:9:8: unsupported construct: 'is' / 'is not' are not supported in NKI kernels; use == or !=
# CHECK-NEXT: {{^}}    if a.dtype is nl.float32:
# CHECK-NEXT: {{^}}       ^
