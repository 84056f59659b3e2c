# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc()
    t = nl.ndarray((1, 1), nl.bfloat16, buffer=nl.sbuf)
    nisa.register_load(n, t)
    return count

# CHECK: register_load_dtype.py:11:5: invalid kernel: nisa.register_load: 'src' has dtype bfloat16; registers hold int8, int16, int32, uint8, uint16, uint32, float32 values
# CHECK-NEXT: {{^}}    nisa.register_load(n, t)
# CHECK-NEXT: {{^}}    ^
