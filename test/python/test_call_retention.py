"""A kernel call keeps nothing of its arguments or results alive once it returns: after
``nki.cpu_simulate(kernel)[lnc](...)`` (the nki-library harness's entry point) the caller's
arrays are freed as soon as the caller drops them, and so are the outputs -- the compile
cache, the warm-call plans and the pooled interpreter states hold no array of a call
(nki-library's inputs take GiBs; a worker running test after test must not accumulate them).
Checked with weak references and a garbage collection, not with resident memory."""
import gc
import weakref

import numpy as np
import pytest

import kernels_for_tests as K
from nki_cpu_simulator import nki as cs


def _args(kind):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 64), dtype=np.float32)
    b = rng.standard_normal((128, 64), dtype=np.float32)
    if kind == "strided":        # a non-contiguous argument runs as a contiguous copy
        a = np.ascontiguousarray(np.concatenate([a, a], axis=1))[:, ::2]
    elif kind == "read-only":    # a read-only argument runs as a writeable copy
        a.flags.writeable = False
    return a, b


@pytest.mark.parametrize("lnc", [1, 2])
@pytest.mark.parametrize("kind", ["contiguous", "strided", "read-only"])
def test_cpu_simulate_keeps_no_argument_or_result_alive(kind, lnc):
    a, b = _args(kind)
    want = a + b
    for _ in range(2):           # the second call takes the warm paths (plans, pooled states)
        y = cs.cpu_simulate(K.add)[lnc](a=a, b=b)
    np.testing.assert_array_equal(y, want)
    refs = [weakref.ref(v) for v in (a, b, y)]
    if a.base is not None:
        refs.append(weakref.ref(a.base))
    del a, b, y
    gc.collect()
    assert [r() is None for r in refs] == [True] * len(refs)


def test_torch_arguments_are_not_kept_alive():
    torch = pytest.importorskip("torch")
    a, b = torch.ones(128, 64), torch.full((128, 64), 2.0)
    y = cs.cpu_simulate(K.add)[1](a=a, b=b)
    assert torch.equal(y, torch.full((128, 64), 3.0))
    refs = [weakref.ref(v) for v in (a, b, y)]
    del a, b, y
    gc.collect()
    assert [r() is None for r in refs] == [True, True, True]
