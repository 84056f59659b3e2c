"""A kernel's output (a fresh array every run) in the interpreter's caches and hazard checks:
the tile views of the output are placed by their subviews' start indices (``Memory.origins``),
not by reading array addresses (microseconds per fresh array), with the footprints the
addresses give (nki_mlir/runtime/hazards.py ``Checker._footprint``); and the pooled machine
state forgets them at the end of the run (``Memory.run_views``), so the caller's output is
freed when the caller drops it."""
import sys
from pathlib import Path

import numpy as np

from nki_mlir.runtime import footprint as fpm
from nki_mlir.runtime import hazard_roots, hazards

import nki_mlir as nki

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import kernels as ex  # noqa: E402  (examples/kernels.py)


def _layernorm_args():
    rng = np.random.default_rng(2)
    x = (3 * rng.standard_normal((256, 64)) + 1).astype(np.float32)
    gamma, beta = (rng.standard_normal((1, 64)).astype(np.float32) for _ in range(2))
    return x, gamma, beta


def test_fresh_output_roots_are_checked_without_reading_addresses(monkeypatch):
    args = _layernorm_args()
    prog = nki.compile(ex.layernorm, *args, use_cache=False).program
    prog.run(list(args), hazards=True)          # warm: the state's own roots are known
    read: list = []
    real = fpm.address

    def spy(a):
        read.append(a)
        return real(a)
    for mod in (fpm, hazards, hazard_roots):
        monkeypatch.setattr(mod, "address", spy)
    (out,) = prog.run(list(args), hazards=True)
    assert not any(a is out or a.base is out for a in read)
    (ref,) = prog.run(list(args))
    np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))


def test_footprints_placed_by_start_index_are_the_address_ones(monkeypatch):
    args = _layernorm_args()
    prog = nki.compile(ex.layernorm, *args, use_cache=False).program
    seen = []
    orig = hazards.Checker._footprint

    def spy(self, a):
        hit = orig(self, a)
        if hit[2] is not None and not hit[1].owned:
            seen.append((hit[2], fpm.footprint(a, fpm.root_of(a))))
        return hit
    monkeypatch.setattr(hazards.Checker, "_footprint", spy)
    prog.run(list(args), hazards=True)
    assert len(seen) >= 2                       # (the output's two tile views at least)
    for got, want in seen:
        for k in ("lo", "hi", "exact", "offset", "shape", "strides", "itemsize"):
            assert getattr(got, k) == getattr(want, k), k


def test_the_pooled_state_keeps_no_output_after_the_run():
    """The subviews of a kernel's output (a fresh array every run) are forgotten at the end
    of the run (``Memory.run_views``): the caller's output is freed when the caller drops
    it, in program order and with the hazard checks, and the results stay the same."""
    import gc
    import weakref
    args = _layernorm_args()
    prog = nki.compile(ex.layernorm, *args, use_cache=False).program
    (ref,) = prog.run(list(args))
    for hazard in (False, True):
        (out,) = prog.run(list(args), hazards=hazard)
        np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))
        alive = weakref.ref(out)
        del out
        gc.collect()
        assert alive() is None, hazard


def test_a_fresh_outputs_views_reuse_their_checked_index(monkeypatch):
    """A subview of a fresh output misses the view cache every run; it indexes the new array
    with the index tuple worked out (and bounds-checked) the first time for those offsets
    (kept_views.py ``KeptSubview``; an out-of-bounds offset is never kept: it faults as before)."""
    from nki_mlir.runtime import views
    calls = []
    orig = views.KeptSubview

    def spy(ss, res, fsrc, fres, dyn, indices, *rest):
        def counted(env):
            calls.append(1)
            return indices(env)
        return orig(ss, res, fsrc, fres, dyn, None if indices is None else counted, *rest)
    monkeypatch.setattr(views, "KeptSubview", spy)
    args = _layernorm_args()
    prog = nki.compile(ex.layernorm, *args, use_cache=False).program
    (ref,) = prog.run(list(args))
    first = len(calls)
    for hazard in (False, True, False):
        (out,) = prog.run(list(args), hazards=hazard)
        np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))
    assert len(calls) == first          # no index worked out again
