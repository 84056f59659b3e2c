"""A rolled loop's check fingerprints the objects of the variables its body names, the
frame's cell and free variables, and what a named callable changes when called (a bound
method's object, a closure's cells); other variables' objects are not walked
(frontend/loops.py: ``watched``)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import trace_build

RNG = np.random.default_rng(5)


def _rows(n, f=64):
    return RNG.standard_normal((n, f)).astype(np.float32)


def _add_after(a, out, value):
    """out[0:128] = a[0:128] + value (a Python float read after the loop)."""
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:128, :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=value)
    nisa.dma_copy(dst=out[0:128, :], src=t)


def _copy_rows(a, out, i):
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)


@nki.jit
def appends_through_a_bound_method(a):
    """``push = seen.append``: the body names ``push``, never ``seen``."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    seen = []
    push = seen.append
    for i in range(1, a.shape[0] // 128):
        push(1)
        _copy_rows(a, out, i)
    _add_after(a, out, float(len(seen)))
    return out


def _counter():
    count = [0]

    def bump():
        count[0] += 1
    return count, bump


@nki.jit
def bumps_through_a_closure(a):
    """``bump`` was made by another function over the list ``count`` also holds."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    count, bump = _counter()
    for i in range(1, a.shape[0] // 128):
        bump()
        _copy_rows(a, out, i)
    _add_after(a, out, float(count[0]))
    return out


def _check_unrolled_as_python(kernel, name, monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    a = _rows(512)
    got = nki.compile(kernel, a, use_cache=False)(a)
    want = a.copy()
    want[:128] += 3.0          # three iterations, each changed the object once
    np.testing.assert_allclose(got, want, rtol=1e-6)
    report = trace_build.last_loop_report()
    assert [w for w, _ in report.values()] == ["unrolled"]
    assert any(f"changes the Python object in '{name}'" in why for _, why in report.values())


def test_a_bound_method_called_in_the_body_is_checked_through_its_object(monkeypatch, tmp_path):
    _check_unrolled_as_python(appends_through_a_bound_method, "push", monkeypatch, tmp_path)


def test_a_closure_called_in_the_body_is_checked_through_its_cells(monkeypatch, tmp_path):
    _check_unrolled_as_python(bumps_through_a_closure, "bump", monkeypatch, tmp_path)


class _Watched:
    """An object that records every read of its ``__dict__`` (how the fingerprint walks it)."""

    reads = 0

    def __init__(self):
        self.items = list(range(100))

    def __getattribute__(self, name):
        if name == "__dict__":
            type(self).reads += 1
        return object.__getattribute__(self, name)


@nki.jit
def holds_an_object_the_body_never_names(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    big = _Watched()
    for i in nl.affine_range(a.shape[0] // 128):
        _copy_rows(a, out, i)
    assert len(big.items) == 100
    return out


def test_objects_the_body_never_names_are_not_walked(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    a = _rows(384)
    _Watched.reads = 0
    got = nki.compile(holds_an_object_the_body_never_names, a, use_cache=False)(a)
    np.testing.assert_array_equal(got, a)
    assert [w for w, _ in trace_build.last_loop_report().values()] == ["rolled"]
    assert _Watched.reads == 0


@nki.jit
def appends_through_locals(a):
    """The body reaches ``seen`` only through ``locals()``."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    seen = []
    for i in range(1, a.shape[0] // 128):
        locals()["seen"].append(1)
        _copy_rows(a, out, i)
    _add_after(a, out, float(len(seen)))
    return out


def test_a_body_calling_locals_is_checked_on_every_local(monkeypatch, tmp_path):
    _check_unrolled_as_python(appends_through_locals, "seen", monkeypatch, tmp_path)
