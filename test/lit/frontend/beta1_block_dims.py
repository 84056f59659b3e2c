# RUN: %nki-mlir compile %s::blocks --arg 512x256xf32 --stage nki | filecheck %s
# RUN: %nki-mlir compile %s::blocks --arg 512x256xf32 --stage nisa | filecheck %s --check-prefix=NISA
# NKI Beta 1 block dims: a (4, par_dim(128), 256) tensor is one SBUF tensor with the 4
# blocks as a free dim; t[i] is a subview at the loop index, and both loops stay rolled.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def blocks(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((4, nl.par_dim(128), 256), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        buf[i] = nl.load(a[i * 128:(i + 1) * 128, :])
    for j in nl.affine_range(4):
        nl.store(out[j * 128:(j + 1) * 128, :], value=nl.exp(buf[j, :, :]))
    return out

# CHECK: %buf = nki.ndarray(name=buf) : memref<128x4x256xf32, #nisa.mem<sbuf>>
# CHECK: scf.for %i =
# CHECK: memref.subview %buf[0, %i, 0] [128, 1, 256] [1, 1, 1] : memref<128x4x256xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[1024, 1], offset: ?>, #nisa.mem<sbuf>>
# CHECK: } {nki.range = "affine"}
# CHECK: scf.for %j =
# CHECK: memref.subview %buf[0, %j, 0] [128, 1, 256]
# CHECK: } {nki.range = "affine"}

# NISA: %buf = nisa.alloc {{.*}}nkim.offset = 0 : i64} : memref<128x4x256xf32, #nisa.mem<sbuf>>
# NISA: scf.for
# NISA: nisa.dma_copy
# NISA: scf.for
# NISA: nisa.activation
