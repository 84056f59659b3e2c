"""Checks of nki_spec.md section 6 on the core instructions: one negative test per error
condition, asserting the message and the reported source line; and the run-time range
warnings of nisa.activation (section 5.3)."""
from __future__ import annotations

import inspect
import os
import warnings

import numpy as np
import pytest

import check_kernels as K
import nki_mlir as nki
from nki_mlir.errors import NKIRangeWarning, NKIRuntimeError, NKIVerifyError

FILE = inspect.getsourcefile(K)
X = np.zeros((128, 8), np.float32)


def line_of(marker: str) -> int:
    """The line of check_kernels.py ending with ``# <marker>``."""
    for i, line in enumerate(open(FILE).read().splitlines(), 1):
        if line.rstrip().endswith(f"# {marker}"):
            return i
    raise AssertionError(marker)


def assert_located(err, marker: str) -> None:
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    assert err.loc.line == line_of(marker), (err.loc.line, line_of(marker))
    text = str(err)
    assert text.splitlines()[0].startswith(f"{err.loc.file}:{err.loc.line}:{err.loc.col}: ")
    assert f"# {marker}" in text.splitlines()[-2] and text.splitlines()[-1].strip() == "^"


# kernel, message fragments (instruction, operand, limit)
COMPILE_TIME = [
    # item 9: start partition of a static view
    (K.bad_start_partition, ["nisa.tensor_copy: operand 'src' covers partitions [16, 48)",
                             "an operand of 32 partitions must start at partition 0 or 32 or 64 or 96"]),
    (K.bad_start_partition_64, ["nisa.tensor_scalar: operand 'data' covers partitions [32, 96)",
                                "an operand of 64 partitions must start at partition 0 or 64"]),
    # item 14: GpSimd cannot access PSUM
    (K.gpsimd_reads_psum, ["nisa.tensor_copy: operand 'src' is in psum", "runs on the GpSimd engine",
                           "cannot access PSUM"]),
    (K.power_on_psum, ["nisa.tensor_tensor: operand 'dst' is in psum", "(op=power runs on GpSimd)"]),
    (K.iota_into_psum, ["nisa.iota: operand 'dst' is in psum", "GpSimd", "cannot access PSUM"]),
    (K.select_from_psum, ["nisa.affine_select: operand 'on_true_tile' is in psum", "cannot access PSUM"]),
    # item 23: bitvec operators on float data
    (K.bitvec_on_float, ["nisa.tensor_tensor: op=bitwise_and is a bitvec operator",
                         "operand 'data1' is float32", "need integer dtypes"]),
    (K.bitvec_reduce_on_float, ["nisa.tensor_reduce: op=bitwise_or is a bitvec operator",
                                "operand 'data' is float32"]),
    # item 10: reduction axis
    (K.reduce_partition_axis, ["nisa.tensor_reduce: axis=[0] is illegal", "never the partition axis 0"]),
    # item 24: activation scale / bias
    (K.scale_not_fp32, ["nisa.activation: operand 'scale' must be float32", "[128, 1] bfloat16",
                        "err_activation_scale_invalid_type"]),
    (K.scale_not_per_partition, ["nisa.activation: operand 'scale' must be a scalar or a [128, 1]",
                                 "got [128, 2]"]),
    (K.bias_int, ["nisa.activation: operand 'bias' must be float32, bfloat16 or float16",
                  "[128, 1] int32", "err_activation_bias_invalid_type"]),
    # item 25: tensor_scalar arithmetic operand dtype
    (K.tensor_scalar_operand_bf16, ["nisa.tensor_scalar: operand 'operand0' of the arithmetic operator "
                                    "multiply must be float32", "bfloat16"]),
    # item 40: op0/op1 classes, reduce_cmd without reduce_op
    (K.tensor_scalar_mixed_classes, ["nisa.tensor_scalar: op0=bitwise_and is bitvec but op1=add is "
                                     "arithmetic", "must be of the same class"]),
    (K.reduce_cmd_without_op, ["nisa.activation: reduce_cmd=reduce accumulates", "no reduce_op is given"]),
]


@pytest.mark.parametrize("kernel,fragments", COMPILE_TIME, ids=[c[0].__name__ for c in COMPILE_TIME])
def test_compile_time_check(kernel, fragments):
    with pytest.raises(NKIVerifyError) as info:
        kernel(X)
    for f in fragments:
        assert f in str(info.value), f
    assert_located(info.value, kernel.__name__)


def test_tensor_copy_on_scalar_engine_needs_trn2():
    with pytest.raises(NKIVerifyError) as info:
        nki.compile(K.act_tensor_copy, X, target="trn1")
    assert ("nisa.tensor_copy: the scalar engine (ACT) cannot run tensor_copy on trn1 (NeuronCore-v2); "
            "use nisa.activation(op=nl.copy") in str(info.value)
    assert_located(info.value, "act_tensor_copy")
    out = nki.compile(K.act_tensor_copy, X, target="trn2")  # fine on NeuronCore-v3
    assert out is not None


# ------------------------------------------------------------------ activation input ranges


@pytest.mark.parametrize("op,value,scale,shown,rng", [
    ("log", 0.0, 1.0, "0", "[2^-64, 2^64]"),
    ("log", 2.0 ** 40, 2.0 ** 30, "1.18059162e+21", "[2^-64, 2^64]"),
    ("sin", 4.0, 1.0, "4", "[-pi, pi]"),
    ("arctan", -2.0, 1.0, "-2", "[-pi/2, pi/2]"),
    ("sqrt", 0.0, 1.0, "0", "[2^-116, 2^118]"),
    ("rsqrt", 2.0 ** 100, 1.0, "1.2676506e+30", "[2^-87, 2^97]"),
    ("reciprocal", -1e-13, 1.0, "-9.99999982e-14", "+-[2^-42, 2^42]"),
])
def test_activation_range_warning(op, value, scale, shown, rng):
    a = np.full((4, 3), 0.5, np.float32)
    a[2, 1] = value
    with pytest.warns(NKIRangeWarning) as rec:
        K.act_range(a, op, scale)
    assert len(rec) == 1
    w = rec[0]
    msg = str(w.message)
    assert f"nisa.activation: op={op} got the input {shown} (data*scale+bias)" in msg
    assert f"outside its valid input range {rng}" in msg
    assert os.path.samefile(w.filename, FILE) and w.lineno == line_of("act_range")
    assert msg.startswith(f"{FILE}:{line_of('act_range')}:")


def test_activation_in_range_and_unranged_functions_do_not_warn():
    a = np.full((4, 3), 0.5, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NKIRangeWarning)
        K.act_range(a, "log", 1.0)
        K.act_range(np.float32(np.pi) * np.ones((2, 2), np.float32), "sin", 1.0)  # inclusive bounds
        K.act_range(np.full((2, 2), 1e30, np.float32), "exp", 1.0)  # exp has no documented range
        K.act_range(np.full((2, 2), np.nan, np.float32), "log", 1.0)  # NaN is not a range fault


def test_activation_range_warns_once_per_run():
    a = np.zeros((4, 3), np.float32)
    with pytest.warns(NKIRangeWarning) as rec:
        K.act_range_loop(a)  # 4 executions of the same instruction
    assert len(rec) == 1 and rec[0].lineno == line_of("act_range_loop")


def test_activation_range_warning_as_error_is_a_located_runtime_error():
    a = np.zeros((4, 3), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NKIRangeWarning)
        with pytest.raises(NKIRuntimeError) as info:
            K.act_range(a, "log", 1.0)
    assert "nisa.activation: op=log got the input 0 (data*scale+bias), outside its valid input range " \
           "[2^-64, 2^64]" in str(info.value)
    assert_located(info.value, "act_range")


def test_activation_range_env_var(monkeypatch):
    a = np.zeros((4, 3), np.float32)
    monkeypatch.setenv("NKI_MLIR_RANGE_CHECK", "error")
    with pytest.raises(NKIRuntimeError) as info:
        K.act_range(a, "sqrt", 1.0)
    assert "op=sqrt got the input 0" in str(info.value)
    assert_located(info.value, "act_range")
    monkeypatch.setenv("NKI_MLIR_RANGE_CHECK", "off")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NKIRangeWarning)
        np.testing.assert_array_equal(K.act_range(a, "sqrt", 1.0), a)


# ------------------------------------------------------------------ memset value kind (item 26)


@pytest.mark.parametrize("dtype,value", [(np.uint8, 200), (np.uint8, 255), (np.int8, -128),
                                         (np.uint16, 65535), (np.uint32, 4000000000), (np.int32, -7),
                                         (np.float32, 1.5)])
def test_memset_fills_every_dtype_with_its_exact_value(dtype, value):
    out = K.memset_value(X, np.dtype(dtype), value)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.full((4, 8), value, dtype))


@pytest.mark.parametrize("dtype,value,fragment", [
    (np.uint8, 256, "nisa.memset: value 256 is out of range for dst dtype uint8 [0, 255]"),
    (np.int8, -129, "nisa.memset: value -129 is out of range for dst dtype int8 [-128, 127]"),
    (np.int32, 1.5, "nisa.memset: dst is int32, so value must be an integer, got 1.5"),
])
def test_memset_value_of_the_wrong_kind_is_a_located_error(dtype, value, fragment):
    from nki_mlir.errors import NKITypeError
    with pytest.raises(NKITypeError) as info:
        K.memset_value(X, np.dtype(dtype), value)
    assert fragment in str(info.value)
    assert_located(info.value, "memset_value")


def test_error_found_by_a_pass_is_located_at_the_user_line():
    # nl.matmul is only expanded into nc_matmul by nki-legalize; its dtype rule fails there
    with pytest.raises(NKIVerifyError) as info:
        K.nl_matmul_mixed_fp32(np.zeros((128, 128), np.float32), np.zeros((128, 128), np.float16))
    assert "nki-legalize: nisa.nc_matmul: fp32/tf32 inputs must pair with fp32/tf32" in str(info.value)
    assert_located(info.value, "nl_matmul_mixed_fp32")
