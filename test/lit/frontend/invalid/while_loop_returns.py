# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc(1)

    def body(r):
        return 0

    nl.while_loop(n, body)
    return count

# CHECK: while_loop_returns.py:14:5: type error: nl.while_loop: body_fun must return the next condition register, got int 0
# CHECK-NEXT: {{^}}    nl.while_loop(n, body)
# CHECK-NEXT: {{^}}    ^
