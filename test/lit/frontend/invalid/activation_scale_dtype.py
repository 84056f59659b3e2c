# RUN: not %nki-mlir compile %s::k --arg 128x8xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    s = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.memset(dst=s, value=2.0)
    nisa.activation(dst=t, op=nl.exp, data=t, scale=s)
    return a

# CHECK: activation_scale_dtype.py:13:5: invalid kernel: nisa.activation: operand 'scale' must be float32 (a scalar or a [P, 1] float32 tensor), got [128, 1] bfloat16 in sbuf [err_activation_scale_invalid_type]
