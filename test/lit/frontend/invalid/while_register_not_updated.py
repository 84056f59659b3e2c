# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    while n:
        pass
    return count

# CHECK: while_register_not_updated.py:11:5: unsupported construct: the body of 'while n:' never writes the register (nisa.register_load / nisa.register_move), so the loop could never end
# CHECK-NEXT: {{^}}    while n:
# CHECK-NEXT: {{^}}    ^
