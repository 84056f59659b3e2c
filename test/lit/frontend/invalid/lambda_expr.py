# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    f = lambda x: x + 1
    return a

# CHECK: lambda_expr.py:9:9: unsupported construct: lambda expressions are not supported in NKI kernels; define a helper function with def instead
# CHECK-NEXT: {{^}}    f = lambda x: x + 1
# CHECK-NEXT: {{^}}        ^
