"""NKI Beta 1 (``neuronxcc.nki``) SPMD-grid kernels for test_spmd.py, run unmodified through
the compat hook.  Written for nki-mlir's tests.  Line-sensitive (negative tests).

Indexing uses slices with ``nl.program_id`` arithmetic (Beta 2 slicing, accepted by the
Beta 1 front).
"""
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402

P = 128
F = 64


@nki.jit
def axpy_rows(a, b):
    """out[pid block] = a * 0.5 + b, one 128-row block per instance of a 1-D grid."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    at = nl.load(a[pid * P:(pid + 1) * P, :])
    bt = nl.load(b[pid * P:(pid + 1) * P, :])
    nl.store(out[pid * P:(pid + 1) * P, :], value=at * 0.5 + bt)
    return out


@nki.jit
def grid_2d(a):
    """Block (i, j) = a block * (10 i + j) + num_programs(0) * 1000 + num_programs(1) * 100
    + num_programs() * 10 + num_programs((0, 1)) + program_ndim() * 0.5."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    j = nl.program_id(axis=1)
    t = nl.load(a[i * P:(i + 1) * P, j * F:(j + 1) * F])
    offset = (nl.num_programs(0) * 1000 + nl.num_programs(axes=1) * 100 + nl.num_programs() * 10
              + nl.num_programs((0, 1)) + nl.program_ndim() * 0.5)
    nl.store(out[i * P:(i + 1) * P, j * F:(j + 1) * F], value=t * float(10 * i + j) + float(offset))
    return out


@nki.jit
def pid_branch(a):
    """Instance 0 negates its block; the others add their program id (an `if` on program_id)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.load(a[pid * P:(pid + 1) * P, :])
    if pid == 0:
        r = t * -1.0
    else:
        r = t + float(pid)
    nl.store(out[pid * P:(pid + 1) * P, :], value=r)
    return out


@nki.jit
def no_program_id(a):
    """Every instance writes the same thing (program_id never read): one compile serves all."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=t * float(nl.num_programs()))
    return out


@nki.jit
def private_vs_shared(a):
    """Instance pid writes a[pid block] into a private (nl.hbm) and a named shared scratch at
    its block, then copies the *other* block of each scratch to its block of the outputs."""
    from_shared = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    from_private = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    scratch_shared = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="scratch")
    scratch_private = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.hbm)
    pid = nl.program_id(0)
    other = 1 - pid
    t = nl.load(a[pid * P:(pid + 1) * P, :])
    nl.store(scratch_shared[pid * P:(pid + 1) * P, :], value=t)
    nl.store(scratch_private[pid * P:(pid + 1) * P, :], value=t)
    s = nl.load(scratch_shared[other * P:(other + 1) * P, :])
    q = nl.load(scratch_private[other * P:(other + 1) * P, :])
    nl.store(from_shared[pid * P:(pid + 1) * P, :], value=s)
    nl.store(from_private[pid * P:(pid + 1) * P, :], value=q)
    return from_shared, from_private


@nki.jit
def ids_and_counts(a):
    """Block pid (of the flattened grid) = program ids and counts, one value per column."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nd = nl.program_ndim()
    t = nl.load(a[0:P, :])
    v = float(nl.program_id(0) * 10 + nl.num_programs() * 100 + nd * 1000)
    nl.store(out[0:P, :], value=t * 0.0 + v)
    return out


@nki.jit
def bad_axis_2d(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:P, :])
    k = nl.program_id(2)  # a 2-D grid has axes 0 and 1
    nl.store(out[0:P, :], value=t)
    return out


@nki.jit
def helper_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


GRIDDED_HELPER = helper_kernel[2]


@nki.jit
def nested_grid_call(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    r = helper_kernel[4](a)  # nested gridded call
    return out


@nki.jit
def nested_grid_object(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    r = GRIDDED_HELPER(a)  # a gridded kernel object from outside
    return out
