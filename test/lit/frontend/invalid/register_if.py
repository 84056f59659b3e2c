# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc()
    if n:
        pass
    return count

# CHECK: register_if.py:10:8: type error: a register's value is only known on the device, so it cannot be used as an if/elif condition or converted with bool()/int(); the only runtime control flow is 'while reg:', nl.while_loop and nl.fori_loop
# CHECK-NEXT: {{^}}    if n:
# CHECK-NEXT: {{^}}       ^
