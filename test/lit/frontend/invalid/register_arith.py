# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    for i in nl.dynamic_range(n):
        j = i * 2
    return count

# CHECK: register_arith.py:12:13: type error: Python arithmetic or comparison on a register is not allowed: its value is only known on the device; use the induction register only as .ap(scalar_offset=...) or with nisa.register_* instructions
# CHECK-NEXT: {{^}}        j = i * 2
# CHECK-NEXT: {{^}}            ^
