# RUN: not %nki-mlir compile %s::k --arg 128x8xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    p = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.psum)
    nisa.iota(dst=p, pattern=[[1, 8]], offset=0)
    return a

# CHECK: gpsimd_psum.py:10:5: invalid kernel: nisa.iota: operand 'dst' is in psum, but this instruction runs on the GpSimd engine (iota is a GpSimd instruction), which cannot access PSUM
# CHECK-NEXT: {{^}}    nisa.iota(dst=p, pattern=[[1, 8]], offset=0)
