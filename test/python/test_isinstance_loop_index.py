"""``isinstance(i, int)`` on the index of a rolled loop is True, as for the Python int it
stands for, in the kernel and in helpers it calls (nki-library's ``TensorView.select`` takes
``if not isinstance(index, int): <dynamic select through a register>``); the loop stays
rolled."""
import numbers

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def pick_row(x, index):
    """x[index] when ``index`` is an int; anything else is refused (as a helper might)."""
    if not isinstance(index, int):
        raise TypeError(f"pick_row wants an int, got {type(index).__name__}")
    return x[index]


class Picker:
    def rows(self, x, index):
        assert isinstance(index, (numbers.Integral, type(None)))
        assert not isinstance(index, bool) and not isinstance(index, (float, np.integer))
        return x[index]


@nki.jit
def copy_blocks(x):
    """x [4, 128, 64] -> out = x, block i picked by helpers that test isinstance(i, int)."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0]):
        assert isinstance(i, int) and isinstance(i, int | None)
        t = nl.ndarray(x.shape[1:], x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=pick_row(x, i))
        nisa.dma_copy(dst=Picker().rows(out, i), src=t)
    return out


def test_loop_index_is_an_int():
    x = np.random.default_rng(0).standard_normal((4, 128, 64)).astype(np.float32)
    np.testing.assert_array_equal(copy_blocks(x), x)


def test_the_loop_stays_rolled():
    x = np.zeros((4, 128, 64), np.float32)
    text = nki.compile(copy_blocks, x).ir("nki")
    assert "scf.for" in text


@nki.jit
def bad_spec(x):
    for i in nl.affine_range(2):
        isinstance(i, 3)
    return x


def test_a_bad_class_spec_is_python_s_type_error():
    with pytest.raises(Exception, match="isinstance"):
        bad_spec(np.zeros((128, 4), np.float32))
