"""A bug in nki-mlir is reported as an internal error, never as the user's mistake.

Where user code runs inside the compiler (a Beta 1 ``ncc.sbuf.alloc`` allocation function is
called at compile time), an exception raised by the user's own code is a located user error,
and one raised by nki-mlir's code under it is an internal compiler error.  The bug is
simulated by a handler whose code object claims a file inside the nki_mlir package.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import internal_error_kernels as K
import nki_mlir.frontend.spmd as spmd
from nki_mlir.errors import NKIError

FILE = os.path.abspath(K.__file__)


def _line(marker: str) -> int:
    with open(FILE) as f:
        return next(i for i, text in enumerate(f, 1) if marker in text)


def _buggy_handler():
    """A handler compiled as if it were nki-mlir's own code (its frames count as internal)."""
    ns: dict = {}
    code = compile("def program_id(cg, axis):\n    return 1 // 0\n", spmd.__file__, "exec")
    exec(code, ns)
    return ns["program_id"]


def test_user_error_in_an_allocation_function():
    with pytest.raises(NKIError) as info:
        K.alloc_raises(np.zeros((128, 512), np.float32))
    err = info.value
    assert "the allocation function raised ZeroDivisionError" in str(err)
    assert err.category != "internal error"
    assert err.loc is not None and err.loc.line == _line("# RAISES")


def test_compiler_bug_under_an_allocation_function_is_internal(monkeypatch):
    from nki_mlir.frontend.builtins import HANDLERS
    monkeypatch.setitem(HANDLERS, "nl.program_id", _buggy_handler())
    with pytest.raises(NKIError) as info:
        K.alloc_calls_api(np.zeros((128, 512), np.float32))
    err = info.value
    assert "internal compiler error" in str(err) and err.category == "internal error"
    assert "the allocation function raised" not in str(err)
