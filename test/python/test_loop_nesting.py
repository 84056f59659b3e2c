"""Loops nested deeper than a rolled loop's in-place retry wrapper allows: the rewritten
kernel would pass CPython's limit of 20 statically nested blocks (each ``for`` becomes a
``while`` / ``try`` / ``for``, frontend/loop_rewrite.py), so its loops are rewritten without
the wrapper.  It compiles (it was an internal compiler error: "SyntaxError: too many
statically nested blocks") and computes the same result as with every loop unrolled; found
in nki-library's MoE blockwise matmul, whose loops nest 8 deep."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend.loop_rewrite import traced_function

RNG = np.random.default_rng(5)


@nki.jit
def nested8(a):
    """out[r] = a[r] * (1 + the number of times (r, i1..i7) passes the innermost test)."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for r in range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[r * 128:(r + 1) * 128, :])
        acc = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=acc, src=t)
        for i1 in range(2):
            for i2 in range(1):
                for i3 in range(1):
                    for i4 in range(1):
                        for i5 in range(1):
                            for i6 in range(1):
                                for i7 in range(2):
                                    if (r + i1 + i7) % 2 == 0:
                                        nisa.tensor_tensor(dst=acc, data1=acc, data2=t,
                                                           op=nl.add)
        nisa.dma_copy(dst=out[r * 128:(r + 1) * 128, :], src=acc)
    return out


def test_deeply_nested_loops_compile_and_match_numpy():
    a = RNG.standard_normal((256, 64)).astype(np.float32)
    got = nested8(a)
    want = np.empty_like(a)
    for r in range(2):
        n = sum((r + i1 + i7) % 2 == 0 for i1 in range(2) for i7 in range(2))
        want[r * 128:(r + 1) * 128] = a[r * 128:(r + 1) * 128] * (1 + n)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_shallow_loops_keep_the_retry_wrapper():
    """Only a function over the limit loses the wrapper: a two-deep nest keeps it."""
    def two(n):
        s = 0
        for i in range(n):
            for j in range(n):
                s += i * j
        return s

    names = set(traced_function(two).__code__.co_names) | set(traced_function(two).__code__.co_freevars)
    assert "__nki_may_retry__" in names
    deep = traced_function(nested8.fn)
    assert "__nki_may_retry__" not in set(deep.__code__.co_freevars) | set(deep.__code__.co_names)
