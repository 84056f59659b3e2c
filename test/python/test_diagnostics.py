"""Every user mistake is an NKIError with file:line:col, the source line and a caret."""
import inspect
import os
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pytest

import diag_kernels as D
from nki_mlir.errors import NKIAllocationError, NKIError, NKISyntaxError, NKITypeError, NKIVerifyError

X = np.zeros((128, 512), np.float32)
FILE = inspect.getsourcefile(D)


def _line_of(text: str) -> int:
    for i, line in enumerate(open(FILE).read().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(text)


CASES = [
    # kernel, extra args, error class, message fragment, source fragment on the reported line
    (D.iter_tensor, (), NKITypeError, "cannot be used as an iterable", "for row in t:"),
    (D.tensor_float, (), NKITypeError, "cannot be used as a Python float", "if float(t) > 0:"),
    (D.big_partition, (), NKIVerifyError, "partition dimension 256, which exceeds the architecture limit of 128",
     "t = nl.ndarray((256, 512)"),
    (D.psum_input, (), NKIVerifyError, "operand 'stationary' is a tensor in psum, but this instruction only accepts sbuf",
     "nisa.nc_matmul(dst=d, stationary=s, moving=m)"),
    (D.moving_too_big, (), NKIVerifyError, "moving free size 1024 exceeds the limit of 512",
     "nisa.nc_matmul(dst=d, stationary=s, moving=m)"),
    (D.overflow, (), NKIAllocationError, "212984 bytes per partition", "big2 = nl.ndarray((128, 40000)"),
    (D.takes_shape, ([128, 512],), NKITypeError, "is a list; list arguments are not accepted", "def takes_shape(a, shape):"),
]


def test_python_constructs_run_as_python():
    """A traced kernel is Python: `is` and lambdas (once errors of the AST front) just run."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the kernels return their input unwritten
        np.testing.assert_array_equal(D.uses_is(X), X)
        np.testing.assert_array_equal(D.uses_lambda(X), X)


@pytest.mark.parametrize("kernel,extra,cls,fragment,source", CASES, ids=[c[0].__name__ for c in CASES])
def test_located_diagnostic(kernel, extra, cls, fragment, source):
    with pytest.raises(cls) as info:
        kernel(X, *extra)
    err = info.value
    text = str(err)
    assert fragment in text
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    nth = 2 if source == "nisa.nc_matmul(dst=d, stationary=s, moving=m)" and kernel is D.moving_too_big else 1
    lines = [i for i, l in enumerate(open(FILE).read().splitlines(), 1) if source in l]
    assert err.loc.line == lines[nth - 1] if source.startswith("nisa.nc_matmul") else err.loc.line == lines[0]
    header, src_line, caret = text.splitlines()[0], text.splitlines()[-2], text.splitlines()[-1]
    assert header.startswith(f"{err.loc.file}:{err.loc.line}:{err.loc.col}: ")
    assert source.strip() in src_line
    assert caret.strip() == "^" and len(caret) == err.loc.col  # caret under the column
    assert "Traceback" not in text


def test_overflow_lists_the_live_tensors_with_lines():
    with pytest.raises(NKIAllocationError) as info:
        D.overflow(X)
    text = str(info.value)
    assert f"'big' [128, 40000] float32" in text and f"diag_kernels.py:{_line_of('big = nl.ndarray')}" in text
    assert f"'big2' [128, 40000] float32" in text


def test_error_is_printed_without_internal_traceback(tmp_path):
    script = tmp_path / "user_kernel.py"
    script.write_text(
        "import numpy as np\n"
        "import nki_mlir as nki\n"
        "import nki_mlir.language as nl\n"
        "@nki.jit\n"
        "def k(a):\n"
        "    t = nl.ndarray((129, 4), dtype=nl.float32, buffer=nl.sbuf)\n"
        "    return a\n"
        "k(np.zeros((4, 4), np.float32))\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), "NKI_MLIR_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 1
    assert f"{script}:6:9: invalid kernel:" in proc.stderr
    assert "nki_mlir/frontend" not in proc.stderr  # no compiler-internal frames


def test_api_called_outside_a_kernel():
    import nki_mlir.language as nl
    with pytest.raises(NKIError, match="err_nki_api_outside_of_nki_kernel"):
        nl.ndarray((128, 4), nl.float32)


def test_bad_schedule_option_is_located_at_the_call():
    import kernels_for_tests as K
    import nki_mlir
    x = np.ones((128, 64), np.float32)
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(NKIError, match="bad option: schedule='bogus'") as exc:
        nki_mlir.compile(K.add, x, x, schedule="bogus")
    assert f"test_diagnostics.py:{line}:" in str(exc.value)
