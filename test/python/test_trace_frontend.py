"""The tracing frontend: a kernel's Python runs with Python's semantics; loops stay rolled
only when that is indistinguishable from running them; errors point at the user's line."""
import inspect

import numpy as np
import pytest

import nki_mlir as nki
import trace_helpers as H
import trace_kernels as K
from nki_mlir.errors import NKIError, NKITypeError, NKIVerifyError
from nki_mlir.frontend.trace_build import last_loop_report

RNG = np.random.default_rng(7)


def _rows(n, f=64):
    return RNG.standard_normal((n, f)).astype(np.float32)


def _line(module, text: str) -> int:
    lines = inspect.getsource(module).splitlines()
    return next(i for i, l in enumerate(lines, 1) if text in l)


def _report(kernel, *args):
    nki.compile(kernel, *args, use_cache=False)
    return {int(k.rsplit(":", 2)[1]): v for k, v in last_loop_report().items()}


def test_python_counter_in_affine_range_counts_every_iteration():
    a = _rows(128)
    np.testing.assert_allclose(K.count_iterations(a), a * 8)  # the AST front gave 1
    (what, why), = _report(K.count_iterations, a).values()
    assert what == "unrolled" and "rebinds 'total'" in why


def test_list_of_tiles_unrolls_and_is_correct():
    a = _rows(512)
    want = np.concatenate([a[i * 128:(i + 1) * 128] for i in reversed(range(4))])
    np.testing.assert_array_equal(K.reverse_tiles(a), want)
    report = _report(K.reverse_tiles, a)
    what, why = report[_line(K, "for i in nl.affine_range(a.shape[0] // 128):") + 0]
    assert what == "unrolled" and "'tiles'" in why and "list append" in why


def test_ragged_last_tile_through_min():
    a = _rows(300)
    np.testing.assert_allclose(K.ragged_rows(a), a + 1)
    report = _report(K.ragged_rows, a)
    what, why = report[_line(K, "for i in range((n + 127) // 128):")]
    assert what == "unrolled" and ("truth value" in why or "Python condition" in why)


def test_dataclass_enum_helper_module_and_is_not_none():
    a = _rows(256)
    np.testing.assert_allclose(K.configured(a, "TRIPLE"), a * 3)
    np.testing.assert_allclose(K.configured(a, "DOUBLE"), a * 2)
    what, _ = next(iter(_report(K.configured, a, "DOUBLE").values()))
    assert what == "rolled"  # the helper's index arithmetic stays symbolic


def test_rolled_loop_matches_forced_unrolling(monkeypatch):
    a = _rows(512)
    rolled = nki.compile(K.configured, a, "DOUBLE", use_cache=False)
    monkeypatch.setenv("NKI_MLIR_LOOPS", "unroll")
    unrolled = nki.compile(K.configured, a, "DOUBLE", use_cache=False)
    assert rolled.ir("nki").count("scf.for") == 1 and "scf.for" not in unrolled.ir("nki")
    np.testing.assert_array_equal(rolled(a), unrolled(a))


def test_tile_used_after_its_loop_is_the_last_iterations():
    a = _rows(384)
    np.testing.assert_array_equal(K.last_tile_escapes(a), a[256:384])
    (what, why), = _report(K.last_tile_escapes, a).values()
    assert what == "unrolled" and "used after the loop" in why


def test_index_as_dict_key_unrolls():
    a = _rows(512)
    signs = np.repeat([1.0, -1.0, 1.0, -1.0], 128)[:, None].astype(np.float32)
    np.testing.assert_allclose(K.parity_scale(a), a * signs)


def test_forced_rolled_loop_that_cannot_roll_is_a_located_error(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_LOOPS", "roll")
    with pytest.raises(NKIError) as info:
        nki.compile(K.parity_scale, _rows(512), use_cache=False)
    assert "NKI_MLIR_LOOPS=roll" in str(info.value)
    assert info.value.loc is not None and info.value.loc.line == _line(K, "scales[i % 2]")


def test_returning_a_reshaped_output():
    a = _rows(128, 8)
    np.testing.assert_array_equal(K.reshaped_output(a), a)


def test_error_in_a_helper_module_has_the_call_chain():
    with pytest.raises(NKIVerifyError) as info:
        K.helper_error(_rows(128))
    err = info.value
    assert err.loc.file == inspect.getsourcefile(H)
    assert err.loc.line == _line(H, "# bad_copy: HBM operands")
    assert [c.line for c in err.chain] == [_line(K, "# helper_error: call site")]
    assert "called from" in str(err) and "Traceback" not in str(err)


def test_python_assertion_is_located():
    with pytest.raises(NKIError) as info:
        K.failing_assert(_rows(128))
    assert "assertion failed: expected 256 rows, got 128" in str(info.value)
    assert info.value.loc.line == _line(K, "assert a.shape[0] == 256")


def test_tensor_as_python_int_is_located():
    with pytest.raises(NKITypeError) as info:
        K.tensor_in_range(_rows(128))
    assert "cannot be used as a Python int" in str(info.value)
    assert info.value.loc.line == _line(K, "# tensor_in_range")
    assert info.value.loc.col == _line_text(K, "# tensor_in_range").index("range(a)") + 1


def _line_text(module, text):
    return next(l for l in inspect.getsource(module).splitlines() if text in l)


def test_descending_range_stays_rolled():
    a = _rows(512)
    want = np.concatenate([a[i * 128:(i + 1) * 128] for i in range(3, -1, -1)])
    np.testing.assert_array_equal(K.reverse_rows_descending(a), want)
    (what, _), = _report(K.reverse_rows_descending, a).values()
    assert what == "rolled"


def test_helper_loop_stays_rolled_and_helper_code_is_restored():
    code = H.copy_tiles.__code__
    a = _rows(512)
    np.testing.assert_array_equal(K.copy_via_helper(a), a)
    report = _report(K.copy_via_helper, a)
    assert report == {_line(H, "# copy_tiles loop"): ("rolled", "affine loop, 4 iterations in one body")}
    assert H.copy_tiles.__code__ is code  # the rewritten code is swapped in only while tracing


def test_enum_and_config_object_arguments_key_the_cache_by_content():
    a = np.ones((128, 8), np.float32)
    f = K.enum_and_config_args
    assert f(a, K.Act.DOUBLE, K.Scale(3.0))[0, 0] == 4.0
    assert f(a, K.Act.TRIPLE, K.Scale(3.0))[0, 0] == 3.0
    assert f(a, K.Act.TRIPLE, K.Scale(5.0))[0, 0] == 5.0  # a new config is a new specialisation
    assert f(a, act=K.Act.DOUBLE, cfg=K.Scale())[0, 0] == 3.0


def test_missing_tensor_attribute_is_a_located_user_error():
    # fuzz finding: an AttributeError raised by the tracer's proxy was an internal error
    with pytest.raises(NKITypeError) as info:
        K.tensor_attribute_typo(_rows(128))
    assert "has no attribute or method 'append'" in str(info.value)
    assert "internal" not in str(info.value)
    assert info.value.loc.line == _line(K, "# tensor_attribute_typo")


def test_api_call_that_does_not_bind_is_a_located_user_error():
    # fuzz finding: a missing argument of a call under mask= was an internal error
    with pytest.raises(NKITypeError) as info:
        K.reduction_without_axis(_rows(128))
    assert "nl.max(): missing 1 required positional argument: 'axis'" in str(info.value)
    assert info.value.loc.line == _line(K, "# reduction_without_axis")
