"""The warm-call guard (nki_mlir/driver/warm.py): a repeated call finds its compiled kernel from
its argument specs without rebuilding the cache key, and every change the full key would
see still compiles anew: a rebound constant or helper, a closure variable, an edited source
file (a re-import, a swapped code object; the warm-call plan does not stat the files), other shapes / dtypes / constants / options, an evicted cache entry; kernels reading
mutable values are never guarded."""
import importlib
import os
import sys

import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.driver import compile as compiler
from nki_mlir.driver import warm
from nki_mlir.runtime import cache

sys.path.insert(0, os.path.dirname(__file__))
import warm_kernels as W  # noqa: E402


@pytest.fixture
def keys(monkeypatch):
    """Counts full cache-key computations."""
    calls = []
    real = compiler._key_parts

    def counted(*a, **k):
        calls.append(a[0])
        return real(*a, **k)
    monkeypatch.setattr(compiler, "_key_parts", counted)
    warm.clear()
    return calls


def test_repeated_call_skips_the_key(keys):
    x = W.ones()
    np.testing.assert_array_equal(W.scaled(x), 2 * x)
    assert len(keys) == 1
    for _ in range(3):
        np.testing.assert_array_equal(W.scaled(x), 2 * x)
    assert len(keys) == 1
    ck = W.scaled.compile(x)
    assert W.scaled.compile(np.zeros_like(x)) is ck and len(keys) == 1
    # other shapes, dtypes, options: their own keys
    W.scaled(W.ones((128, 32)))
    nki.compile(W.scaled, x, target="trn1")
    nki.compile(W.scaled, x, schedule="in-order")
    assert len(keys) == 4


def test_rebound_constant_and_helper_recompile(keys, monkeypatch):
    x = W.ones()
    W.scaled(x)
    monkeypatch.setattr(W, "SCALE", 5.0)
    np.testing.assert_array_equal(W.scaled(x), 5 * x)
    monkeypatch.setattr(W, "HELPER", W._shift_into)
    np.testing.assert_array_equal(W.scaled(x), x + 5)
    assert len(keys) == 3
    np.testing.assert_array_equal(W.scaled(x), x + 5)
    assert len(keys) == 3


def test_closure_variable_recompiles(keys):
    k, set_offset = W.make_offset_kernel(1.0)
    x = W.ones()
    np.testing.assert_array_equal(k(x), x + 1)
    np.testing.assert_array_equal(k(x), x + 1)
    set_offset(4.0)
    np.testing.assert_array_equal(k(x), x + 4)
    assert len(keys) == 2


def test_mutable_values_are_never_guarded(keys):
    x = W.ones()
    np.testing.assert_array_equal(W.tabled(x), 3 * x)
    W.TABLE[0] = 7.0            # changed in place: same object
    try:
        np.testing.assert_array_equal(W.tabled(x), 7 * x)
    finally:
        W.TABLE[0] = 3.0
    assert len(keys) == 2


def test_edited_source_file_gives_a_new_key(keys, tmp_path, monkeypatch):
    src = tmp_path / "edited_kernel.py"
    text = ("import nki_mlir as nki\nimport nki_mlir.isa as nisa\nimport nki_mlir.language as nl\n\n"
            "@nki.jit\ndef k(x):\n"
            "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
            "    nisa.dma_copy(dst=out, src=x)\n"
            "    return out\n")
    src.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("edited_kernel")
    x = W.ones()
    mod.k(x)
    mod.k(x)
    assert len(keys) == 1
    src.write_text(text + "# edited\n")
    k = mod.k
    k(x)        # the warm plan: the same function objects run (no stat per call, warm.py)
    assert len(keys) == 1
    nki.compile(k, x)               # the full path compares the files: a new key
    assert len(keys) == 2
    k.fn.__code__ = k.fn.__code__.replace()    # as IPython's autoreload swaps the code
    k(x)
    assert len(keys) == 3
    mod = importlib.reload(mod)     # a re-import: a new kernel object and function
    mod.k(x)
    mod.k(x)
    assert len(keys) == 4 and mod.k is not k


def test_evicted_entry_and_env_options(keys, monkeypatch):
    x = W.ones()
    W.scaled(x)
    cache.memory_clear()
    W.scaled(x)                       # the guard's key is no longer in memory: full path
    assert len(keys) == 2
    monkeypatch.setenv("NKI_MLIR_OUTPUT_CHECK", "off")
    W.scaled(x)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    assert nki.compile(W.scaled, x).target == "trn1"
    assert len(keys) == 4


def test_unkeyable_arguments_take_the_full_path(keys):
    """A configuration object argument: keyed by content on every call."""
    class Cfg:
        def __init__(self, s):
            self.s = s
    assert warm.spec_key(W.scaled.fn, (W.ones(), Cfg(1)), {}, ()) is None
    assert warm.spec_key(W.scaled.fn, (W.ones(), (1, 2.0, "a")), {"b": None}, ()) is not None
    assert warm.spec_key(W.scaled.fn, (W.ones(), [1]), {}, ()) is None
