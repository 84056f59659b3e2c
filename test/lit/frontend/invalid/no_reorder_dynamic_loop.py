# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc(3)
    with nl.no_reorder():
        for i in nl.dynamic_range(n):
            pass
    return count

# CHECK: no_reorder_dynamic_loop.py:11:18: unsupported construct: nl.dynamic_range: runtime (dynamic) loops are not allowed inside 'with nl.no_reorder():'; static loops are
# CHECK-NEXT: {{^}}        for i in nl.dynamic_range(n):
# CHECK-NEXT: {{^}}                 ^
