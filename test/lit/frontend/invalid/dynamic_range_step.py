# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    for i in nl.dynamic_range(0, 8, -1):
        pass
    return count

# CHECK: dynamic_range_step.py:9:14: type error: nl.dynamic_range: step must be a positive compile-time int, got int -1
# CHECK-NEXT: {{^}}    for i in nl.dynamic_range(0, 8, -1):
# CHECK-NEXT: {{^}}             ^
