# RUN: env NKI_MLIR_EXPLAIN_LOOPS=1 %nki-mlir compile %s::k --arg 512x256xf32 --stage nki 2>&1 | filecheck %s
# The loop report: which loops stayed rolled, which were unrolled, and why.
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    tiles = []
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        tiles.append(t)
    for i in range(len(tiles)):
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=tiles[i])
    for j in nl.static_range(1):
        pass
    return out

# CHECK: nki-mlir loops of k:
# CHECK-NEXT: loop_decisions.py:12:5: unrolled: the body changes the Python object in 'tiles' (a list append, an attribute or item assignment), which outlives the iteration
# CHECK-NEXT: loop_decisions.py:16:5: unrolled: its index is used as a Python int (range(), an index into a list, int()) at {{.*}}loop_decisions.py:17:62
# CHECK-NEXT: loop_decisions.py:18:5: unrolled: nl.static_range
# CHECK-NOT: scf.for
