# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    s = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=d, stationary=s, moving=m)
    return a

# CHECK: matmul_moving_too_big.py:12:5: invalid kernel: nisa.nc_matmul: moving free size 1024 exceeds the limit of 512 (gemm_moving_fmax on trn2: one PSUM bank of fp32)
# CHECK-NEXT: {{^}}    nisa.nc_matmul(dst=d, stationary=s, moving=m)
# CHECK-NEXT: {{^}}    ^
