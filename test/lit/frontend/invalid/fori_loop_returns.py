# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    def body(i):
        return i

    nl.fori_loop(0, 4, body)
    return count

# CHECK: fori_loop_returns.py:12:5: type error: nl.fori_loop: body_fun must return None, got the induction register of nl.fori_loop
# CHECK-NEXT: {{^}}    nl.fori_loop(0, 4, body)
# CHECK-NEXT: {{^}}    ^
