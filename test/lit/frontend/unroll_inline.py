# RUN: %nki-mlir compile %s::scaled --arg 128x1280xf32 --const factor=0.5 --stage nki | filecheck %s --check-prefix=ROLL
# RUN: env NKI_MLIR_LOOPS=unroll %nki-mlir compile %s::scaled --arg 128x1280xf32 --const factor=0.5 --stage nki | filecheck %s
# The kernel's Python runs: a helper is run at its call, a compile-time `if` is Python's.
# The range loop stays one scf.for (its index only feeds views); NKI_MLIR_LOOPS=unroll
# unrolls it (Python's plain iteration).
import nki
import nki.isa as nisa
import nki.language as nl


def scale_tile(dst, src, factor):
    nisa.tensor_scalar(dst=dst, data=src, op0=nl.multiply, operand0=factor)


@nki.jit
def scaled(x, factor):
    p, f = x.shape
    full, tail = divmod(f, 512)
    out = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
    for c in range(full):
        t = nl.ndarray((p, 512), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, c * 512:(c + 1) * 512])
        scale_tile(t, t, factor)
        nisa.dma_copy(dst=out[:, c * 512:(c + 1) * 512], src=t)
    if tail > 0:
        t2 = nl.ndarray((p, tail), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t2, src=x[:, full * 512:f])
        scale_tile(t2, t2, factor * 2)
        nisa.dma_copy(dst=out[:, full * 512:f], src=t2)
    return out

# ROLL:       %out = nki.ndarray(name=out)
# ROLL:       scf.for %c = %c0 to %c2 step %c1 {
# ROLL:         %t = nki.ndarray(name=t) : memref<128x512xf32, #nisa.mem<sbuf>>
# ROLL:         %[[OFF:.*]] = arith.muli %c, %c512 : index
# ROLL:         memref.subview %x[0, %[[OFF]]] [128, 512] [1, 1]
# ROLL:         nki.tensor_scalar(
# ROLL-NOT:     nki.tensor_scalar(
# ROLL:       } {nki.range = "sequential"}
# ROLL:       %t2 = nki.ndarray(name=t2) : memref<128x256xf32, #nisa.mem<sbuf>>
# ROLL:       memref.subview %x[0, 1024] [128, 256] [1, 1]
# ROLL:       nki.tensor_scalar(
# ROLL-NOT:   nki.tensor_scalar(

# CHECK-NOT:  scf.for
# CHECK:      memref.subview %x[0, 0] [128, 512] [1, 1]
# CHECK:      %[[H:.*]] = arith.constant 5.000000e-01 : f32
# CHECK:      nki.tensor_scalar({{.*}}operand0=f32 %[[H]], op0=multiply)
# CHECK:      memref.subview %x[0, 512] [128, 512] [1, 1]
# CHECK:      nki.tensor_scalar({{.*}}operand0=f32 %[[H]], op0=multiply)
# CHECK:      %t2 = nki.ndarray(name=t2) : memref<128x256xf32, #nisa.mem<sbuf>>
# CHECK:      memref.subview %x[0, 1024] [128, 256] [1, 1] : memref<128x1280xf32, #nisa.mem<shared_hbm>> to memref<128x256xf32, strided<[1280, 1], offset: 1024>, #nisa.mem<shared_hbm>>
# CHECK:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
# CHECK:      nki.tensor_scalar({{.*}}operand0=f32 %[[ONE]], op0=multiply)
# CHECK-NOT:  nki.tensor_scalar
