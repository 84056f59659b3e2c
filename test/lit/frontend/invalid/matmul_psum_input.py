# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    s = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    m = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=d, stationary=s, moving=m)
    return a

# CHECK: matmul_psum_input.py:12:5: invalid kernel: nisa.nc_matmul: operand 'stationary' is a tensor in psum, but this instruction only accepts sbuf tensors
# CHECK-NEXT: {{^}}    nisa.nc_matmul(dst=d, stationary=s, moving=m)
# CHECK-NEXT: {{^}}    ^
