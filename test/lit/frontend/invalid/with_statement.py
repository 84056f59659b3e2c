# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    with nl.static_range(2):
        pass
    return count

# CHECK: with_statement.py:9:5: compile-time evaluation error: TypeError: 'StaticRange' object does not support the context manager protocol
# CHECK-NEXT: {{^}}    with nl.static_range(2):
# CHECK-NEXT: {{^}}    ^
