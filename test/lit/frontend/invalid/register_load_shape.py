# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc()
    t = nl.ndarray((2, 1), nl.int32, buffer=nl.sbuf)
    nisa.register_load(n, t)
    return count

# CHECK: register_load_shape.py:11:5: type error: nisa.register_load: 'src' must be a 1-element tensor (e.g. shape (1, 1)), got t [2, 1] int32 in sbuf
# CHECK-NEXT: {{^}}    nisa.register_load(n, t)
# CHECK-NEXT: {{^}}    ^
