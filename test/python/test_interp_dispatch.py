"""Program-order loops call the instructions' own closures (issue 20): no queue-mode wrapper
and no per-instruction guard between the loop and the instruction, while a failure inside
the body is still located at the op that raised it."""
import sys

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.diagnostics import OpSite
from nki_mlir.errors import NKIRuntimeError
from nki_mlir.runtime import env as renv
from nki_mlir.runtime import numerics as nm


@nki.jit
def looped_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        ta = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        tb = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta, src=a[nl.ds(i * 128, 128), :])
        nisa.dma_copy(dst=tb, src=b[nl.ds(i * 128, 128), :])
        tc = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.maximum)  # (the line located below)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=tc)
    return out


def _line_of(fragment: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if fragment in line and "def " not in line)


def _args():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((256, 16)).astype(np.float32) for _ in range(2)]


def _patched_maximum(monkeypatch, fn):
    """Decode ``looped_add`` afresh with the ALU's ``max`` replaced by ``fn`` (a plain
    function: the instruction then takes its general path, which calls it)."""
    monkeypatch.setitem(nm.ALU, "max", fn)
    a, b = _args()
    return nki.compile(looped_add, a, b, use_cache=False).program, a, b


def test_loop_body_calls_the_instruction_closure_directly(monkeypatch):
    callers = []

    def maximum(x, y):
        f = sys._getframe(1)            # the instruction's closure
        callers.append((f.f_back.f_code.co_name, f.f_back.f_code.co_filename))
        return np.maximum(x, y)
    prog, a, b = _patched_maximum(monkeypatch, maximum)
    out, = prog.run([a, b], mode="program-order")
    np.testing.assert_array_equal(out, np.maximum(a, b))
    assert len(callers) == 2
    # the caller is the scf.for closure itself (control.py), not a queue wrapper or a guard
    assert all(name == "run" and file.endswith("control.py") for name, file in callers), callers


@pytest.mark.parametrize("mode", ["program-order", "queues"])
def test_failure_in_loop_body_is_located_at_its_instruction(monkeypatch, mode):
    def maximum(x, y):
        raise ValueError("boom")
    prog, a, b = _patched_maximum(monkeypatch, maximum)
    with pytest.raises(NKIRuntimeError) as info:
        prog.run([a, b], mode=mode)
    msg = str(info.value)
    assert "nisa.tensor_tensor_arith: internal error while executing this instruction: " \
           "ValueError: boom" in msg
    assert f":{_line_of('op=nl.maximum')}:" in msg
    assert isinstance(info.value.__cause__, ValueError)


def test_program_order_unwraps_guards_and_queue_wrappers():
    def impl(env):
        env.append(1)
    site = OpSite("the-op", None, None)     # (what a guard keeps of its op)
    g = renv.guard(site, impl)

    def wrapper(env):
        raise AssertionError("queue-mode wrapper called in program order")
    wrapper.program_order = g

    def plain(env):
        env.append(2)
    body, ops = renv.program_order((wrapper, plain))
    assert body == (impl, plain) and ops == {impl: site}
    with pytest.raises(ValueError, match="x"):       # an unguarded closure: raised as it is
        renv.raise_located(ops, plain, ValueError("x"))


@nki.jit
def flat_max(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    tc = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.maximum)  # (top level, located below)
    nisa.dma_copy(dst=out, src=tc)
    return out


def test_top_level_calls_the_instruction_closure_directly_and_locates_failures(monkeypatch):
    callers = []

    def maximum(x, y):
        f = sys._getframe(1)
        callers.append((f.f_back.f_code.co_name, f.f_back.f_code.co_filename))
        return np.maximum(x, y)
    monkeypatch.setitem(nm.ALU, "max", maximum)
    a, b = (x[:128] for x in _args())
    prog = nki.compile(flat_max, a, b, use_cache=False).program
    out, = prog.run([a, b], mode="program-order")
    np.testing.assert_array_equal(out, np.maximum(a, b))
    assert [(n, f.rsplit("/", 1)[-1]) for n, f in callers] == [("run_checked", "program.py")]

    def boom(x, y):
        raise ValueError("boom")
    monkeypatch.setitem(nm.ALU, "max", boom)
    prog = nki.compile(flat_max, a, b, use_cache=False).program
    with pytest.raises(NKIRuntimeError) as info:
        prog.run([a, b], mode="program-order")
    assert f":{_line_of('(top level, located below)')}:" in str(info.value)
    assert "ValueError: boom" in str(info.value)
