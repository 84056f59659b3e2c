# RUN: %nki-mlir compile %s::scaled_add --arg 256x512xf32 --arg 256x512xf32 --stage nki | filecheck %s
# RUN: %nki-mlir compile %s::scaled_add --arg 256x512xf32 --arg 256x512xf32 --stage nisa | filecheck %s --check-prefix=NISA
# NKI Beta 1 front: nl.arange index grids become the same memref.subview Beta 2 slicing
# makes, tile operators become nl functions, `t[...] = value` writes t directly.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scaled_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    for t in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[t * 128 + i_p, i_f])
        y = nl.load(b[t * 128 + i_p, i_f])
        z = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
        z[...] = x * 2.0 + y
        nl.store(out[t * 128 + i_p, i_f], value=z)
    return out

# CHECK: scf.for %t =
# CHECK: memref.subview %a[%{{.*}}, 0] [128, 512] [1, 1]
# CHECK: nki.load
# CHECK: nki.binary(x={{.*}}, fn=multiply)
# CHECK: nki.binary(x={{.*}}, fn=add)
# CHECK: nki.tensor_copy(dst={{.*}} %z, src={{.*}}) {nki.assign}
# CHECK: nki.store
# CHECK: } {nki.range = "affine"}

# NISA: scf.for %t =
# NISA: nisa.dma_copy
# NISA: nisa.dma_copy
# NISA: nisa.tensor_scalar_arith
# NISA: nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %z,
# NISA-NOT: nisa.tensor_copy
# NISA: nisa.dma_copy(dst={{.*}}shared_hbm{{.*}}, src={{.*}} %z
