"""Kernels with one mistake each, for test_checks.py.

The offending line of each kernel ends with ``# <kernel name>``: the tests look the line up
by that marker and check that the error (or warning) is reported there.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def _load(a, dtype):
    t = nl.ndarray(a.shape, dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    return t


# ------------------------------------------------------------------ compile-time checks


@nki.jit
def bad_start_partition(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((32, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t[16:48, :])  # bad_start_partition
    return a


@nki.jit
def bad_start_partition_64(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((64, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t[32:96, :], op0=nl.add, operand0=1.0)  # bad_start_partition_64
    return a


@nki.jit
def gpsimd_reads_psum(a):
    p = nl.ndarray((128, 8), nl.float32, buffer=nl.psum)
    nisa.memset(dst=p, value=0.0)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=p, engine=nisa.engine.gpsimd)  # gpsimd_reads_psum
    return a


@nki.jit
def power_on_psum(a):
    t = _load(a, a.dtype)
    p = nl.ndarray((128, 8), nl.float32, buffer=nl.psum)
    nisa.tensor_tensor(dst=p, data1=t, data2=t, op=nl.power)  # power_on_psum
    return a


@nki.jit
def iota_into_psum(a):
    p = nl.ndarray((128, 8), nl.int32, buffer=nl.psum)
    nisa.iota(dst=p, pattern=[[1, 8]], offset=0)  # iota_into_psum
    return a


@nki.jit
def select_from_psum(a):
    p = nl.ndarray((128, 8), nl.float32, buffer=nl.psum)
    nisa.memset(dst=p, value=1.0)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.affine_select(dst=u, pattern=[[-1, 8]], channel_multiplier=1, on_true_tile=p,  # select_from_psum
                       on_false_value=0.0)
    return a


@nki.jit
def bitvec_on_float(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((128, 8), nl.int32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=u, data1=t, data2=t, op=nl.bitwise_and)  # bitvec_on_float
    return a


@nki.jit
def bitvec_reduce_on_float(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((128, 1), nl.int32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=u, op=nl.bitwise_or, data=t, axis=1)  # bitvec_reduce_on_float
    return a


@nki.jit
def reduce_partition_axis(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=u, op=nl.add, data=t, axis=0)  # reduce_partition_axis
    return a


@nki.jit
def scale_not_fp32(a):
    t = _load(a, a.dtype)
    s = nl.ndarray((128, 1), nl.bfloat16, buffer=nl.sbuf)
    nisa.memset(dst=s, value=2.0)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=u, op=nl.exp, data=t, scale=s)  # scale_not_fp32
    return a


@nki.jit
def scale_not_per_partition(a):
    t = _load(a, a.dtype)
    s = nl.ndarray((128, 2), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=s, value=2.0)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=u, op=nl.exp, data=t, scale=s)  # scale_not_per_partition
    return a


@nki.jit
def bias_int(a):
    t = _load(a, a.dtype)
    b = nl.ndarray((128, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=b, value=1)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=u, op=nl.exp, data=t, bias=b)  # bias_int
    return a


@nki.jit
def tensor_scalar_operand_bf16(a):
    t = _load(a, a.dtype)
    v = nl.ndarray((128, 1), nl.bfloat16, buffer=nl.sbuf)
    nisa.memset(dst=v, value=2.0)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=v)  # tensor_scalar_operand_bf16
    return a


@nki.jit
def tensor_scalar_mixed_classes(a):
    t = _load(a, nl.int32)
    u = nl.ndarray((128, 8), nl.int32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.bitwise_and, operand0=3, op1=nl.add, operand1=1.0)  # tensor_scalar_mixed_classes
    return a


@nki.jit
def reduce_cmd_without_op(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=u, op=nl.exp, data=t, reduce_cmd=nisa.reduce_cmd.reduce)  # reduce_cmd_without_op
    return a


@nki.jit
def act_tensor_copy(a):
    t = _load(a, a.dtype)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t, engine=nisa.engine.scalar)  # act_tensor_copy
    return a


# ------------------------------------------------------------------------ run-time checks

ACTS = {"log": nl.log, "sin": nl.sin, "arctan": nl.arctan, "sqrt": nl.sqrt, "rsqrt": nl.rsqrt,
        "reciprocal": nl.reciprocal, "exp": nl.exp}


@nki.jit
def act_range(a, op, scale):
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    t = _load(a, a.dtype)
    u = nl.ndarray(a.shape, nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=u, op=ACTS[op], data=t, scale=scale)  # act_range
    nisa.dma_copy(dst=out, src=u)
    return out


@nki.jit
def act_range_loop(a):
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    t = _load(a, a.dtype)
    u = nl.ndarray(a.shape, nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(4):
        nisa.activation(dst=u, op=nl.log, data=t)  # act_range_loop
    nisa.dma_copy(dst=out, src=u)
    return out


@nki.jit
def memset_value(x, dtype, value):
    t = nl.ndarray((4, 8), dtype=dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=value)  # memset_value
    out = nl.ndarray((4, 8), dtype=dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def nl_matmul_mixed_fp32(a, b):
    x = nl.load(a)
    y = nl.load(b)
    z = nl.matmul(x, y, transpose_x=True)  # nl_matmul_mixed_fp32
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, z)
    return out
