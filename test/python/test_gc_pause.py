"""A run, a decode and a compile pause Python's cyclic garbage collector and restore its
state after (issue 17: collections walking the millions of objects a large compile and
decode keep alive cost an nki-library attention-block test 31 s CPU of its run)."""
import gc

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIRuntimeError
from nki_mlir.runtime import gc_pause
from nki_mlir.runtime import numerics as nm


@nki.jit
def tile_max(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.maximum)
    nisa.dma_copy(dst=out, src=ta)
    return out


@pytest.fixture
def gc_state():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def _program(monkeypatch, fn):
    """``tile_max`` decoded afresh with the ALU's ``max`` replaced by ``fn``."""
    monkeypatch.setitem(nm.ALU, "max", fn)
    a = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
    return nki.compile(tile_max, a, -a, use_cache=False).program, a


@pytest.mark.parametrize("mode", ["program-order", "queues"])
def test_the_collector_is_paused_during_a_run_and_enabled_after(monkeypatch, gc_state, mode):
    seen = []

    def maximum(x, y):
        seen.append(gc.isenabled())
        return np.maximum(x, y)
    prog, a = _program(monkeypatch, maximum)
    gc.enable()
    out, = prog.run([a, -a], mode=mode)
    np.testing.assert_array_equal(out, np.abs(a))
    assert seen == [False]
    assert gc.isenabled()


def test_a_failing_run_restores_the_collector(monkeypatch, gc_state):
    def maximum(x, y):
        raise ValueError("boom")
    prog, a = _program(monkeypatch, maximum)
    gc.enable()
    with pytest.raises(NKIRuntimeError, match="boom"):
        prog.run([a, -a], mode="program-order")
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled(monkeypatch, gc_state):
    prog, a = _program(monkeypatch, np.maximum)
    gc.disable()
    prog.run([a, -a])
    assert not gc.isenabled()
    with gc_pause.no_cyclic_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_decode_runs_with_the_collector_paused(monkeypatch, gc_state):
    from nki_mlir.runtime import interpreter
    seen = []
    decode = interpreter.decode

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return decode(*args, **kwargs)
    monkeypatch.setattr(interpreter, "decode", spy)
    gc.enable()
    a = np.ones((128, 4), np.float32)
    nki.compile(tile_max, a, a, use_cache=False).program
    assert seen == [False] and gc.isenabled()


@pytest.mark.parametrize("lnc", [None, 2])
def test_a_call_compiles_decodes_and_runs_in_one_pause(monkeypatch, gc_state, lnc):
    """The collector stays paused between the phases of one call (compile -> decode -> run,
    per instance): a collection there walks every object of the just-compiled module."""
    from nki_mlir.driver import compile as driver_compile
    after_compile = []
    compile_kernel = driver_compile.compile_kernel

    def spy(*args, **kwargs):
        ck = compile_kernel(*args, **kwargs)
        after_compile.append(gc.isenabled())
        return ck
    monkeypatch.setattr(driver_compile, "compile_kernel", spy)
    a = np.arange(128 * 4, dtype=np.float32).reshape(128, 4) + 7
    gc.enable()
    kernel = nki.jit(tile_max.fn, target="trn2", use_cache=False)
    out = kernel[lnc](a, -a) if lnc else kernel(a, -a)
    np.testing.assert_array_equal(out, np.abs(a))
    assert after_compile == [False] and gc.isenabled()   # one compile: no nl.program_id


class _Node:
    """A weak-referenceable object for building reference cycles."""


def _cycle():
    import weakref
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def _collections_during(fn):
    seen = []

    def callback(phase, info):
        if phase == "start":
            seen.append(info["generation"])
    gc.callbacks.append(callback)
    try:
        fn()
    finally:
        gc.callbacks.remove(callback)
    return seen


def test_a_pause_that_left_many_young_objects_ends_with_one_full_collection(monkeypatch, gc_state):
    """The objects a large call keeps reach the oldest generation in one walk, and the
    cycles it dropped are freed when the pause ends (not over three later collections)."""
    monkeypatch.setattr(gc_pause, "SETTLE_AFTER", 5_000)
    gc.enable()
    gc.collect()
    kept = []

    def call():
        nonlocal ref
        with gc_pause.no_cyclic_gc():
            ref = _cycle()
            kept.extend([i] for i in range(10_000))   # young, GC-tracked, kept
    ref = None
    assert _collections_during(call) == [2]
    assert ref() is None
    assert gc.get_count()[0] < 700 and gc.isenabled()


def test_a_small_pause_collects_nothing(monkeypatch, gc_state):
    monkeypatch.setattr(gc_pause, "SETTLE_AFTER", 5_000)
    gc.enable()
    gc.collect()
    ref = None

    def call():
        nonlocal ref
        with gc_pause.no_cyclic_gc():
            ref = _cycle()
    assert _collections_during(call) == []
    assert ref() is not None      # left to the collector's own schedule
    gc.collect()
    assert ref() is None


def test_a_nested_pause_leaves_the_collection_to_the_outermost(monkeypatch, gc_state):
    monkeypatch.setattr(gc_pause, "SETTLE_AFTER", 5_000)
    gc.enable()
    gc.collect()
    kept = []

    def call():
        with gc_pause.no_cyclic_gc():
            with gc_pause.no_cyclic_gc():
                kept.extend([i] for i in range(10_000))
            assert not gc.isenabled()
    assert _collections_during(call) == [2]
