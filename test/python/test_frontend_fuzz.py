"""Frontend fuzzing: random kernels, right or wrong, never end in an internal error.

Hypothesis draws small Beta 2 kernels from a grammar of the constructs real code uses
(allocations, slices with loop-index arithmetic, instructions, Python loops over lists,
``min`` of indices, conditions on indices, helper calls, deliberate mistakes such as
out-of-bounds slices or mismatched shapes).  Compiling one must either succeed (and then
running it on the interpreter must succeed) or raise an ``NKIError`` that is located in
the kernel's file and is not an internal error.  Any other exception fails the test.
"""
from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nki_mlir as nki
from nki_mlir.errors import NKIError, NKIKernelWarning, NKIRangeWarning

_COUNTER = itertools.count()

HEADER = """\
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def helper(dst, src, k):
    nisa.tensor_scalar(dst=dst, data=src, op0=nl.multiply, operand0=float(k))


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
"""

LOOPS = ["nl.affine_range({n})", "range({n})", "nl.sequential_range({n})", "nl.static_range({n})"]
ROWS = ["i * 128", "(i + {d}) * 128", "min(i * 128, {rows} - 128)", "i * 128 + {d}"]
BODIES = [
    "t = nl.ndarray((128, {f}), a.dtype, buffer=nl.sbuf)\n"
    "nisa.dma_copy(dst=t, src=a[{r}:{r} + 128, 0:{f}])\n"
    "nisa.dma_copy(dst=out[{r}:{r} + 128, 0:{f}], src=t)",
    "t = nl.ndarray((128, {f}), a.dtype, buffer=nl.sbuf)\n"
    "nisa.dma_copy(dst=t, src=a[{r}:{r} + 128, 0:{f}])\n"
    "helper(t, t, {d})\n"
    "nisa.dma_copy(dst=out[{r}:{r} + 128, 0:{f}], src=t)",
    "t = nl.ndarray((128, {f}), a.dtype, buffer=nl.sbuf)\n"
    "nisa.dma_copy(dst=t, src=a[{r}:{r} + 128, 0:{f}])\n"
    "if i % 2 == 0:\n"
    "    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)\n"
    "nisa.dma_copy(dst=out[{r}:{r} + 128, 0:{f}], src=t)",
    "tiles.append(nl.ndarray((128, {f}), a.dtype, buffer=nl.sbuf))\n"
    "nisa.dma_copy(dst=tiles[-1], src=a[{r}:{r} + 128, 0:{f}])\n"
    "nisa.dma_copy(dst=out[{r}:{r} + 128, 0:{f}], src=tiles[-1])",
    "s = nl.ndarray((128, {f}), nl.float32, buffer=nl.psum)\n"
    "t = nl.ndarray((128, {f}), a.dtype, buffer=nl.sbuf)\n"
    "nisa.dma_copy(dst=t, src=a[{r}:{r} + 128, 0:{f}])\n"
    "nisa.tensor_copy(dst=s, src=t)\n"
    "nisa.tensor_copy(dst=t, src=s)\n"
    "nisa.dma_copy(dst=out[{r}:{r} + 128, 0:{f}], src=t)",
    "t = nl.ndarray((128, {f}), a.dtype, buffer=nl.sbuf)\n"
    "nisa.dma_copy(dst=t, src=a[{r}:{r} + 128, 0:{f}])\n"
    "total += 1\n"
    "nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(total))\n"
    "nisa.dma_copy(dst=out[{r}:{r} + 128, 0:{f}], src=t)",
]
TAILS = ["", "assert total >= 0, 'never'\n", "x = t\n", "nisa.dma_copy(dst=out[0:128, 0:{f}], src=t)\n",
         "if a.shape[0] > {rows}:\n    raise ValueError('too many rows')\n"]


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line if line else line for line in text.splitlines())


@st.composite
def kernels(draw):
    rows = draw(st.sampled_from([128, 256, 384, 512]))
    cols = draw(st.sampled_from([64, 128, 512]))
    n = draw(st.integers(0, 5))
    f = draw(st.sampled_from([32, 64, 128, 512, 600]))
    d = draw(st.integers(0, 2))
    r = draw(st.sampled_from(ROWS)).format(d=d, rows=rows)
    loop = draw(st.sampled_from(LOOPS)).format(n=n)
    body = draw(st.sampled_from(BODIES)).format(f=f, r=r, d=d)
    tail = draw(st.sampled_from(TAILS)).format(f=f, rows=rows)
    src = (HEADER + "    tiles = []\n    total = 0\n    t = None\n"
           + f"    for i in {loop}:\n" + _indent(body, 8) + "\n"
           + _indent(tail, 4) + ("\n" if tail else "") + "    return out\n")
    return src, (rows, cols)


def _load(src: str, folder: str):
    path = os.path.join(folder, f"fuzz_kernel_{next(_COUNTER)}.py")
    with open(path, "w") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as d:
        yield d


@settings(max_examples=int(os.environ.get("NKI_MLIR_FUZZ_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kernels())
def test_no_internal_error(folder, case):
    src, shape = case
    mod, path = _load(src, folder)
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NKIKernelWarning)
        warnings.simplefilter("ignore", NKIRangeWarning)
        try:
            nki.compile(mod.k, a, use_cache=False)(a)
        except NKIError as exc:
            assert exc.category != "internal error", f"{exc}\n--- kernel ---\n{src}"
            assert exc.loc is None or os.path.samefile(exc.loc.file, path) or \
                exc.category in ("runtime error", "hazard"), f"{exc}\n--- kernel ---\n{src}"
