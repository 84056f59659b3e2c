# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc(3)
    for i in nl.dynamic_range(n):
        nisa.register_load(i, count)
    return count

# CHECK: induction_register_readonly.py:11:9: type error: nisa.register_load: 'dst' is 'i', the induction register of nl.dynamic_range, which is read-only; copy it into a register from nisa.register_alloc() with nisa.register_move first
# CHECK-NEXT: {{^}}        nisa.register_load(i, count)
# CHECK-NEXT: {{^}}        ^
