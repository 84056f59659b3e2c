"""One negative test per Beta 1 error of the Beta 1 front core: a located NKIError at the
marked line, whose message carries the Beta 1 error name (nki_spec.md section 6)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import beta1_error_kernels as K
from nki_mlir.errors import NKIError

SRC = inspect.getsource(K).splitlines()


def _line(marker: str) -> int:
    return next(i + 1 for i, s in enumerate(SRC) if s.rstrip().endswith(f"# <- {marker}"))


A = np.zeros((128, 64), np.float32)
CASES = [
    ("arange_1d", (A,), "err_1d_arange_not_supported", "1-D nl.arange"),
    ("mixed_indexing", (A,), "err_unsupported_mixing_basic_advanced_tensor_indexing", "mixes basic"),
    ("assign_to_index", (A,), "err_cannot_assign_to_index", "cannot be assigned"),
    ("indirect_free_dim", (A, np.zeros((128, 1), np.int32)), "err_indirect_indices_free_dim",
     "only allowed on the partition"),
    ("branch_on_tile", (A,), "err_dynamic_control_flow_not_supported", "not known at compile time"),
    ("and_on_tiles", (A,), "err_ambiguous_tensor_truth_value", "single truth value"),
    ("out_of_block", (A,), "err_local_variable_used_out_of_scope", "cannot be used outside"),
    ("arange_condition", (A,), "err_control_flow_condition_depending_on_arange", "no single truth"),
    ("shape_too_small", (A,), "err_store_dst_shape_smaller_than_other_shape", "at least as large"),
    ("arange_out_of_bounds", (A,), "err_tensor_access_out_of_bound", "out of bounds"),
    ("operators_in_beta1_value", (A,), None, "not affine"),
    ("block_dims", (A,), None, "still has block dims [4]"),
]


@pytest.mark.parametrize("name,args,code,text", CASES, ids=[c[0] for c in CASES])
def test_beta1_error_is_located_and_named(name, args, code, text):
    marker = "nonaffine_index" if name == "operators_in_beta1_value" else name
    with pytest.raises(NKIError) as info:
        getattr(K, name)(*args)
    err = info.value
    msg = str(err)
    assert text in msg
    if code:
        assert code in msg
    assert err.loc is not None and err.loc.line == _line(marker), msg
    assert "^" in msg and "beta1_error_kernels.py" in msg
