"""Per-instruction overhead of the interpreter (issue 20): a PSUM flags write replacing its
own pending write at once, placed ``nisa.alloc`` run by a program-order closure,
``arith.muli`` / ``addi`` by a constant inline, the matmul operands and the output-coverage
check without helper frames -- each with the results of the plain path."""
import operator
import sys

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIRuntimeError
from nki_mlir.runtime import program as rprog
from nki_mlir.runtime.memory import Memory


@nki.jit
def scaled_products(a, b):
    """out[i] = (a.T @ b) * 0.5 + b per 128-row block i, through rotating SBUF / PSUM tiles."""
    out = nl.ndarray((2 * 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ta = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    for i in nl.affine_range(2):
        tb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tb, src=b[nl.ds(i * 128, 128), :])
        acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
        res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=acc, op0=nl.multiply, operand0=0.5)
        both = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=both, data1=res, data2=tb, op=nl.add)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=both)
    return out


def _case():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    return nki.compile(scaled_products, a, b, use_cache=False).program, a, b


def _want(a, b):
    return np.concatenate([(a.T @ b[i * 128:(i + 1) * 128]) * np.float32(0.5)
                           + b[i * 128:(i + 1) * 128] for i in range(2)])


def _calls_during(fn, pick) -> int:
    """How many profiler events ``pick(event, frame, arg)`` selects while ``fn()`` runs."""
    n = 0

    def prof(frame, event, arg):
        nonlocal n
        if pick(event, frame, arg):
            n += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n


def test_rotating_tiles_give_the_same_bits_in_both_modes():
    prog, a, b = _case()
    out, = prog.run([a, b], mode="program-order")
    np.testing.assert_allclose(out, _want(a, b), rtol=1e-5, atol=1e-5)
    queued, = prog.run([a, b], mode="queues", hazards=True)
    again, = prog.run([a, b], mode="program-order")
    assert out.tobytes() == queued.tobytes() == again.tobytes()


class _CountingDict(dict):
    gets = 0

    def get(self, *a):
        _CountingDict.gets += 1
        return super().get(*a)


def test_flags_write_replaces_its_own_pending_write_without_lookups():
    mem = Memory("trn2")
    a = mem.view(1, 0, "psum", 0, 0, (4, 8), np.float32)[1]
    c = mem.view(2, 0, "psum", 0, 64, (4, 8), np.float32)[1]
    mem.set_flags(a, True)
    mem.set_flags(c, True)
    mem.rects = _CountingDict(mem.rects)
    _CountingDict.gets = 0
    mem.set_flags(a, False)                      # replaces a's pending write
    assert _CountingDict.gets == 0
    assert mem.flags_state(a) is False and mem.flags_state(c) is True
    mem.settle()
    assert (mem.psum_flags[0:4, 0:32] == 0).all() and (mem.psum_flags[0:4, 64:96] == 0xFF).all()


def test_placed_allocs_run_their_program_order_closure_and_locate_failures(monkeypatch):
    prog, a, b = _case()
    kinds = [getattr(f, "__qualname__", type(f).__name__).split(".")[0] for f in prog._po_body]
    assert "PlacedAllocPO" in kinds               # the top-level ``ta`` (runtime/alloc_run.py)
    out, = prog.run([a, b], mode="program-order")
    np.testing.assert_allclose(out, _want(a, b), rtol=1e-5, atol=1e-5)

    def broken(self, *args, **kw):
        raise ValueError("no view")
    rprog.release_idle_states(0)                  # a fresh memory: the views are made again
    monkeypatch.setattr(Memory, "view", broken)
    with pytest.raises(NKIRuntimeError, match="nisa.alloc.*ValueError: no view"):
        prog.run([a, b], mode="program-order")
    rprog.release_idle_states(0)


@nki.jit
def nested_rows(a):
    """out = a, copied through one SBUF tile per 128-row block (i * 2 + j)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        for j in nl.affine_range(2):
            t = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[nl.ds((i * 2 + j) * 128, 128), :])
            nisa.dma_copy(dst=out[nl.ds((i * 2 + j) * 128, 128), :], src=t)
    return out


def test_index_arithmetic_runs_inline():
    prog, a, b = _case()
    prog.run([a, b], mode="program-order")
    n = _calls_during(lambda: prog.run([a, b], mode="program-order"),
                      lambda ev, fr, arg: ev == "c_call" and arg is operator.mul)
    assert n == 0
    x = np.arange(512 * 8, dtype=np.float32).reshape(512, 8)
    rows = nki.compile(nested_rows, x, use_cache=False).program
    ops = (operator.mul, operator.add, operator.sub)
    n = _calls_during(lambda: rows.run([x], mode="program-order"),
                      lambda ev, fr, arg: ev == "c_call" and arg in ops)
    assert n == 0
    for mode in ("program-order", "queues"):
        out, = rows.run([x], mode=mode)
        assert out.tobytes() == x.tobytes()


def test_matmul_and_coverage_check_make_no_helper_frames():
    prog, a, b = _case()
    prog.run([a, b], mode="program-order")

    def helper(ev, fr, arg):
        name, file = fr.f_code.co_name, fr.f_code.co_filename
        return ev == "call" and (
            (name in ("<lambda>", "operand", "_blas_out") and file.endswith("isa_matmul.py")) or
            (name == "<genexpr>" and file.endswith("hbm_fill.py")))
    assert _calls_during(lambda: prog.run([a, b], mode="program-order"), helper) == 0


@nki.jit
def transposed(a):
    """out[:, block j] = a[:, block j].T for a [128, 256] ``a``: each [128, 128] block
    transposed on TensorE and copied out of PSUM into its columns of one SBUF tile."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    r = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        t = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, nl.ds(j * 128, 128)])
        tp = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.psum)
        nisa.nc_transpose(dst=tp, data=t)
        nisa.tensor_copy(dst=r[:, nl.ds(j * 128, 128)], src=tp)
    nisa.dma_copy(dst=out, src=r)
    return out


def test_transposing_copy_makes_no_copyto_dispatch_frame():
    x = np.random.default_rng(2).standard_normal((128, 256)).astype(np.float32)
    prog = nki.compile(transposed, x, use_cache=False).program
    out, = prog.run([x], mode="program-order")
    assert out.tobytes() == np.concatenate([x[:, :128].T, x[:, 128:].T], axis=1).tobytes()
    n = _calls_during(lambda: prog.run([x], mode="program-order"),
                      lambda ev, fr, arg: ev == "call" and fr.f_code.co_name == "copyto")
    assert n == 0
    queued, = prog.run([x], mode="queues", hazards=True)
    assert queued.tobytes() == out.tobytes()
