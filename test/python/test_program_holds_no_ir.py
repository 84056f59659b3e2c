"""Once a kernel call has returned, nothing of the compile's xDSL IR (ops, blocks, regions,
SSA values, attributes) is reachable from the compiled kernel, its decoded program, the in-memory
compile cache or the warm-call plans (:mod:`nki_mlir.runtime.ir_release`): the decoded
program keeps what its run-time messages say about an op as plain data
(:class:`nki_mlir.diagnostics.OpSite`), and what needs an op later (a hazard-checked run,
the cost model) decodes the artifact again.  An nki-library attention kernel's module is
~1.7 M GC-tracked objects per instance, which every later full collection would walk.

Checked with a walk of what the objects refer to (not entering modules, classes and
functions' globals), and the run-time messages against a program decoded from the same
module that keeps its IR."""
import collections
import gc
import sys
import types

import numpy as np
import pytest
import xdsl.ir as xir

import ir_free_kernels as K
import nki_mlir as nki
from nki_mlir.driver import warm, warm_plan
from nki_mlir.errors import NKIRuntimeError
from nki_mlir.runtime import cache
from nki_mlir.runtime.interpreter import decode

IR = (xir.Operation, xir.Block, xir.Region, xir.SSAValue, xir.Attribute)
_SKIP = (types.ModuleType, type, types.FrameType, types.CodeType)

X = (np.random.default_rng(0).standard_normal((256, 128)) * 0.1).astype(np.float32)
W = (np.random.default_rng(1).standard_normal((128, 64)) * 0.1).astype(np.float32)
T = np.arange(8 * 4 * 16, dtype=np.float32).reshape(8, 4, 16)


def _referents(o) -> list:
    if isinstance(o, types.FunctionType):     # its cells and defaults, not its globals
        cells = []
        for c in o.__closure__ or ():
            try:
                cells.append(c.cell_contents)
            except ValueError:
                pass
        return cells + list(o.__defaults__ or ()) + list((o.__kwdefaults__ or {}).values())
    if isinstance(o, types.MethodType):
        return [o.__self__, o.__func__]
    return gc.get_referents(o)


def reachable_ir(*roots) -> collections.Counter:
    """The xDSL IR objects reachable from ``roots``, counted by ``holder type -> IR type``."""
    modules = {id(m.__dict__) for m in list(sys.modules.values()) if m is not None}
    seen = {id(r) for r in roots}
    todo = collections.deque(roots)
    found: collections.Counter = collections.Counter()
    while todo:
        o = todo.popleft()
        for r in _referents(o):
            if isinstance(r, IR):
                found[f"{type(o).__name__} -> {type(r).__name__}"] += 1
            elif id(r) not in seen and not isinstance(r, _SKIP) and id(r) not in modules:
                seen.add(id(r))
                todo.append(r)
    return found


def test_the_walk_finds_ir():
    ck = nki.compile(K.rolled_mix, X, W, use_cache=False)
    assert reachable_ir(ck._nisa_module())


@pytest.mark.parametrize("hazards", [False, True])
def test_a_called_kernel_holds_no_ir(hazards, monkeypatch):
    from nki_mlir.driver import compile as driver
    again = []
    monkeypatch.setattr(driver, "_decode_files", lambda *a: again.append(a))
    ck = nki.compile(K.rolled_mix, X, W)
    (y,) = ck.run((X, W), {}, hazards=hazards)
    assert again == []      # (a hazard-checked run's program read its own ops: decoded once)
    e = np.exp(X.reshape(2, 128, 128) @ W) + 1
    np.testing.assert_allclose(y, e.reshape(256, 64), rtol=2e-3)
    gc.collect()
    assert reachable_ir(ck) == {}


@pytest.mark.parametrize("hazards", ["0", "1"])
def test_the_cache_and_the_warm_paths_hold_no_ir(hazards, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", hazards)
    for _ in range(2):                  # (the second call takes the warm paths)
        K.rolled_mix(X, W)
        K.dynamic_rows(T, np.array([[3]], np.int32))
    gc.collect()
    assert reachable_ir(cache._MEMORY, warm._GUARDS, warm.PLANS, warm_plan._PLANS) == {}


def _error(run) -> str:
    with pytest.raises(NKIRuntimeError) as e:
        run()
    return str(e.value)


@pytest.mark.parametrize("hazards", [False, True])
def test_run_time_errors_are_the_same_as_with_the_ir(hazards):
    which = np.array([[3]], np.int32)
    ck = nki.compile(K.dynamic_rows, T, which)
    (y,) = ck.run((T, which), {}, hazards=hazards)
    np.testing.assert_array_equal(y, T[3:5])
    ck = ck.final() if hazards else ck
    kept = decode(ck._nisa_module(), ck.spec.name)    # (keeps its IR)
    bad = np.array([[7]], np.int32)                   # (row block 8: out of bounds)
    got = _error(lambda: ck.program.run([T, bad], hazards=hazards))
    want = _error(lambda: kept.run([T, bad], hazards=hazards))
    assert got == want
    assert "ir_free_kernels.py:" in got and "out-of-bounds access of 'source'" in got
    gc.collect()
    assert reachable_ir(ck) == {}


def test_accesses_resolve_while_another_checker_drops_the_ops():
    """The core threads of an LNC launch prepare their hazard checks at once, and the first
    to finish drops the ops (ir_release.drop_ops: each op, then its slots): an instruction
    whose op is gone but whose slots are not resolves its accesses from the artifact, not
    as an op without accesses."""
    ck = nki.compile(K.rolled_mix, X, W, use_cache=False).final()
    infos = ck.decoded(hazards=True).schedule.infos      # (keeps its ops)
    want = [i.resolve_accesses() for i in infos]
    assert all(want)
    for i in infos:
        i.accesses, i._op = None, None
    assert [i.resolve_accesses() for i in infos] == want
