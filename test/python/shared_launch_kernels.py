"""LNC kernels for test_shared_launch.py: program ids used only in index arithmetic (one
trace serves both instances) and uses that need the id as a Python value (one trace per
instance).  Written for nki-mlir's tests."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

ROWS = 128


def _half(x, pid):
    return x[pid * ROWS:(pid + 1) * ROWS, :]


@nki.jit
def named_halves(x):
    """out[pid half] = 3 x[pid half] + 1 in a loop of 2 column tiles; names are f-strings of
    the id (and of a name built from one)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    base = f"core{pid}"
    cols = x.shape[1] // 2
    for j in range(2):
        t = nl.ndarray((ROWS, cols), dtype=x.dtype, buffer=nl.sbuf, name=base + "_in")
        nisa.dma_copy(dst=t, src=_half(x, pid)[:, j * cols:(j + 1) * cols], name=f"load_{pid}")
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=3.0, op1=nl.add,
                           operand1=1.0, name=f"{base}_scale")
        nisa.dma_copy(dst=_half(out, pid)[:, j * cols:(j + 1) * cols], src=t)
    return out


@nki.jit
def swap_halves(x):
    """out[pid half] = x[other half] through sendrecv with rank 1 - pid."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    mine = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=_half(x, pid))
    got = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.sendrecv(src=mine, dst=got, send_to_rank=1 - pid, recv_from_rank=1 - pid, pipe_id=0)
    nisa.dma_copy(dst=_half(out, pid), src=got)
    return out


@nki.jit
def branch_on_id(x):
    """Core 0 doubles its half, core 1 negates its half: ``if`` on the id."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=_half(x, pid))
    if pid == 0:
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    else:
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-1.0)
    nisa.dma_copy(dst=_half(out, pid), src=t)
    return out


@nki.jit
def name_as_key(x):
    """A name of the id used as a dict key (needs its text): out = x + 10 * (pid + 1)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    scale = {"core0": 10.0, "core1": 20.0}
    t = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=_half(x, pid))
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=scale[f"core{pid}"])
    nisa.dma_copy(dst=_half(out, pid), src=t)
    return out


@nki.jit
def joined_name(x):
    """A name joined by str.join, which type-checks its items (a symbolic name is no str):
    out = x + 1, traced per instance."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf,
                   name="_".join(["tile", f"core{pid}"]))
    nisa.dma_copy(dst=t, src=_half(x, pid))
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=_half(out, pid), src=t)
    return out


@nki.jit
def bad_slice(x):
    """A genuine mistake (a 3-index subscript of a 2-D tensor): reported as it is per
    instance, located at the subscript."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[pid * ROWS:(pid + 1) * ROWS, :, 0])
    nisa.dma_copy(dst=_half(out, pid), src=t)
    return out
