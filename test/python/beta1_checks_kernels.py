"""NKI Beta 1-style kernels for test_beta1_checks.py (line numbers matter: tests find the
reported line by its text)."""
import numpy as np

from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.compiler as ncc  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402
import neuronxcc.nki.typing as nt  # noqa: E402
from neuronxcc.nki.typing import tensor  # noqa: E402

import nki_mlir.isa as nisa2  # noqa: E402  (Beta 2 dst-first instructions for setup)


# ------------------------------------------------------------------ nki.typing


@nki.jit
def annotated(a: nt.tensor[128, 512]):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(a)))
    return out


@nki.jit
def annotated_bad_shape(a: nt.tensor[128, 256]):  # BAD_SHAPE
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


@nki.jit
def annotated_bad_dtype(a: nt.tensor[[128, 512], nl.bfloat16]):  # BAD_DTYPE
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


@nki.jit
def annotated_string(a: "nt.tensor[64, 64]"):  # STRING_ANNOTATION
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


@nki.jit
def annotated_local(a):
    t: tensor[128, 512] = nl.load(a)  # documented AnnAssign form (value accepted)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


@nki.jit
def annotated_local_bad(a):
    t: tensor[128, 256] = nl.load(a)  # ANN_BAD
    return a


# --------------------------------------------------------------- mutability


@nki.jit
def writes_immutable(in_tensor):
    x = nl.load(in_tensor)
    nl.store(in_tensor, value=nl.exp(x))  # IMMUTABLE_WRITE
    return in_tensor


@nki.jit
def writes_immutable_view(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a[0:64, :])
    nisa2.dma_copy(dst=a[64:128, :], src=x)  # IMMUTABLE_VIEW_WRITE
    nl.store(out, value=nl.load(a))
    return out


@nki.jit
def writes_mutable(in_tensor: nt.mutable_tensor):
    x = nl.load(in_tensor)
    nl.store(in_tensor, value=nl.exp(x))
    return in_tensor


@nki.jit
def mutable_not_returned(in_tensor: nt.mutable_tensor):
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    y = nl.exp(nl.load(in_tensor))
    nl.store(out, value=y)
    nl.store(in_tensor, value=y)
    return out  # MUTABLE_NOT_RETURNED


@nki.jit
def legacy_output_argument(a, out):
    nl.store(out, value=nl.exp(nl.load(a)))


@nki.jit
def legacy_writes_nothing(a, out):  # LEGACY_NOTHING
    x = nl.load(a)


# ----------------------------------------------------------- output written


@nki.jit
def output_not_written(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    return out  # OUTPUT_NOT_WRITTEN


@nki.jit
def output_dead_loop(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    M, N = 128, 129
    for i in nl.affine_range(M // N):
        nl.store(out, value=nl.load(a))
    return out  # DEAD_LOOP


@nki.jit
def output_written_by_view(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        nl.store(out[i * 64:(i + 1) * 64, :], value=nl.load(a[i * 64:(i + 1) * 64, :]))
    return out


# ------------------------------------------------------------ ncc allocation


@nki.jit
def mod_alloc_copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=4096))
    nisa2.dma_copy(dst=t, src=a)
    u = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.auto_alloc())
    nisa2.activation(dst=u, op=nl.exp, data=t)
    nisa2.dma_copy(dst=out, src=u)
    return out


@nki.jit
def psum_mod_alloc(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.ndarray((128, 128), dtype=a.dtype, buffer=ncc.sbuf)
    sb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
    nisa2.dma_copy(dst=sa, src=a)
    nisa2.dma_copy(dst=sb, src=b)
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=3))
    nisa2.nc_matmul(dst=p, stationary=sa, moving=sb)
    r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa2.tensor_copy(dst=r, src=p)
    nisa2.dma_copy(dst=out, src=r)
    return out


def psum_place(idx, pdim_size, fdim_size):
    """An ncc.psum.alloc function: (bank_id, start_partition, byte_addr)."""
    return (5, 0, 0)


def psum_place_bad(idx, pdim_size, fdim_size):
    return (0, 0)


@nki.jit
def psum_func_alloc(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
    sb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
    nisa2.dma_copy(dst=sa, src=a)
    nisa2.dma_copy(dst=sb, src=b)
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.psum.alloc(psum_place))
    nisa2.nc_matmul(dst=p, stationary=sa, moving=sb)
    r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa2.tensor_copy(dst=r, src=p)
    nisa2.dma_copy(dst=out, src=r)
    return out


@nki.jit
def psum_func_bad(a):
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.psum.alloc(psum_place_bad))  # PSUM_BAD
    return a


def fixed_place(idx, pdim_size, fdim_size):
    """An ncc.sbuf.alloc function: one tile at byte 8192 (called with idx == ())."""
    assert pdim_size == 128 and fdim_size == 512 * 4
    return (0, 8192 + 1024 * len(idx))


def num_elems(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def modulo_alloc(base_addr, num_free_tiles=()):
    """A modulo allocation function in the style of the Beta 1 direct-allocation guide."""
    def place(idx, pdim_size, fdim_size):
        shape = num_free_tiles if num_free_tiles else (1,) * len(idx)
        mod = tuple(i % s for i, s in zip(idx, shape))
        lin = sum(i * num_elems(shape[d + 1:]) for d, i in enumerate(mod))
        return (0, base_addr + lin * fdim_size)
    return place


@nki.jit
def func_alloc(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.alloc(fixed_place))
    u = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.alloc(modulo_alloc(base_addr=16384)))
    nisa2.dma_copy(dst=t, src=a)
    nisa2.activation(dst=u, op=nl.exp, data=t)
    nisa2.dma_copy(dst=out, src=u)
    return out


@nki.jit
def tiles_without_block_dims(a):
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))  # MULTI
    return a


@nki.jit
def zeros_with_alloc(a):
    t = nl.zeros((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))  # ZEROS_ALLOC
    return a


@nki.jit
def bad_alloc_func(a):
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.alloc(num_elems))  # BAD_FUNC
    return a


def _overlapping(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    u = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
    nisa2.dma_copy(dst=t, src=a)
    nisa2.activation(dst=u, op=nl.exp, data=t)
    nisa2.dma_copy(dst=out, src=u)
    return out


overlapping = nki.jit(_overlapping)


@ncc.force_auto_alloc
@nki.jit
def overlapping_auto(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    u = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
    nisa2.dma_copy(dst=t, src=a)
    nisa2.activation(dst=u, op=nl.exp, data=t)
    nisa2.dma_copy(dst=out, src=u)
    return out


@ncc.enable_stack_allocator
@ncc.skip_middle_end_transformations
@nki.jit
@ncc.multi_buffer(factor=2)
def decorated(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    with ncc.no_reorder():
        x = nl.load(a)
        nl.store(out, value=nl.exp(x))
    return out


@nki.jit
def uses_allocation_scope(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    with ncc.allocation_scope():  # ALLOCATION_SCOPE
        x = nl.load(a)
        nl.store(out, value=nl.multiply(x, 2.0))
    return out


# ------------------------------------------------------------ Beta 1-only nl


@nki.jit
def static_cast_bf16(a):
    out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    y = nl.static_cast(nl.load(a), nl.bfloat16)
    nl.store(out, value=y)
    return out


@nki.jit
def loop_reduce_sum(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(a.shape[0] // 128):
        t = nl.load(a[k * 128:(k + 1) * 128, :])
        acc = nl.loop_reduce(t, op=np.add, loop_indices=[k], dtype=nl.float32)
    nl.store(out, value=acc)
    return out


@nki.jit
def loop_reduce_max_subscript(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.full((128, 512), -1.0e30, dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(a.shape[0] // 128):
        t = nl.load(a[k * 128:(k + 1) * 128, :])
        acc[:, :] = nl.loop_reduce(t, op=nl.maximum, loop_indices=k)
    nl.store(out, value=acc)
    return out


@nki.jit
def loop_reduce_annotated(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(a.shape[0] // 128):
        t = nl.load(a[k * 128:(k + 1) * 128, :])
        acc: nt.tensor[128, 512] = nl.loop_reduce(t, op=np.add, loop_indices=[k])
    nl.store(out, value=acc)
    return out


@nki.jit
def loop_reduce_as_operand(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    t = nl.load(a)
    nl.store(out, value=nl.add(nl.loop_reduce(t, op=np.add, loop_indices=[]), t))  # OPERAND
    return out


@nki.jit
def loop_reduce_no_accumulator(a):
    t = nl.load(a)
    fresh = nl.loop_reduce(t, op=np.add, loop_indices=[])  # NO_ACC
    return fresh


@nki.jit
def loop_reduce_unassigned(a):
    t = nl.load(a)
    nl.loop_reduce(t, op=np.add, loop_indices=[])  # UNASSIGNED
    return a


@nki.jit
def atomic_add_direct(a, b):
    rmw = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(rmw, value=nl.load(a))
    nl.atomic_rmw(rmw, value=nl.load(b), op=np.add)
    return rmw


@nki.jit
def atomic_add_indirect(table, indices, values):
    rmw = nl.ndarray(table.shape, dtype=table.dtype, buffer=nl.shared_hbm)
    nl.store(rmw, value=nl.load(table))
    idx = nl.load(indices)
    nl.atomic_rmw(rmw.vector_select(0, idx), value=nl.load(values), op=np.add)
    return rmw


@nki.jit
def atomic_bad_op(a):
    rmw = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(rmw, value=nl.load(a))
    nl.atomic_rmw(rmw, value=nl.load(a), op=np.multiply)  # ATOMIC_BAD_OP
    return rmw


@nki.jit
def softmax_beta1(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.softmax(x, 1)
    z = nl.softmax(x, axis=[1], dtype=nl.float32, compute_dtype=nl.float32)
    nl.store(out, value=nl.add(y, z))
    return out
