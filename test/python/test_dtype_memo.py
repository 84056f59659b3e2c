"""``dtypes.as_dtype`` remembers its answer for dtype objects and scalar types (issue 17: the
tracer normalises a dtype several times per instruction); the answer is the one the
uncached path gives, objects whose answer may change (anything with a ``dtype``
attribute, strings) are not remembered, and a rejected dtype is rejected every time."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nki_mlir import dtypes
from nki_mlir.errors import NKITypeError


@pytest.mark.parametrize("x", [np.float32, np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16),
                               ml_dtypes.float8_e4m3fn, np.int8, np.uint16, np.float64, np.int64,
                               float, int, bool, np.bool_, "bfloat16", "float32"])
def test_memo_gives_the_uncached_answer(x):
    want = dtypes.BY_NAME[x] if isinstance(x, str) else dtypes._as_dtype(x)
    assert dtypes.as_dtype(x) == want
    assert dtypes.as_dtype(x) == want       # (from the memo)
    if not isinstance(x, str):
        assert dtypes._AS_DTYPE[id(x)] == (x, want)


def test_objects_with_a_dtype_attribute_are_not_remembered():
    class Holder:
        dtype = np.dtype(np.float32)

    h = Holder()
    assert dtypes.as_dtype(h) == np.float32
    h.dtype = np.dtype(np.int8)
    assert dtypes.as_dtype(h) == np.int8
    assert id(h) not in dtypes._AS_DTYPE


@pytest.mark.parametrize("x", [np.complex64, np.dtype(np.complex128), "nope"])
def test_rejected_every_time(x):
    for _ in range(2):
        with pytest.raises(NKITypeError):
            dtypes.as_dtype(x)
    assert id(x) not in dtypes._AS_DTYPE
