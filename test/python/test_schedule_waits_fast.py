"""The wait reduction of nisa-schedule (schedule.compute_waits) in linear time is the
pairwise one it replaced: ``_same_queue_kept`` drops exactly the waits another wait of the
same queue implies (``_implies`` on every pair), and ``_dominates`` memoised per pair of
blocks answers as the plain walk -- checked on every consumer of kernels with loops
against many subsets of their instructions, and on whole modules (same printed IR with
the pairwise reduction patched back in)."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

from nki_mlir.compiler import parse_module
from nki_mlir.driver.pipeline import print_module
from nki_mlir.passes import schedule as S
from nki_mlir.passes.dependence import collect_nodes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels as EX  # noqa: E402
from test_dependence_cross_ops import batches  # noqa: E402
from test_schedule import BODY  # noqa: E402


def _args(name):
    rng = np.random.default_rng(5)
    if name == "tiled_matmul":
        return (rng.standard_normal((256, 256)).astype(ml_dtypes.bfloat16),
                rng.standard_normal((256, 512)).astype(ml_dtypes.bfloat16))
    if name == "row_softmax":
        return (rng.standard_normal((256, 512)).astype(np.float32),)
    if name == "layernorm":
        return (rng.standard_normal((256, 512)).astype(np.float32),
                rng.standard_normal((1, 512)).astype(np.float32),
                rng.standard_normal((1, 512)).astype(np.float32))
    return tuple(rng.standard_normal((256, 128)).astype(np.float32) for _ in range(3))


def _texts():
    """nisa IR (scheduled) of kernels with loops: the examples, an unrolled batch loop
    around affine loops, a multi-buffered loop."""
    out = {}
    for name in ("tiled_matmul", "row_softmax", "layernorm", "attention"):
        out[name] = getattr(EX, name).compile_with(_args(name), {}, use_cache=False).ir("nisa")
    a = np.ones((128 * 3, 256), np.float32)
    out["batches"] = batches.compile_with((a, np.ones((128, 256), np.float32)), {},
                                          use_cache=False).ir("nisa")
    out["body"] = "builtin.module {\n" + BODY + "\n}"
    return out


TEXTS = _texts()


def _pairwise_kept(ps, c, dom=None):
    return [y for y in ps if not any(x is not y and S._implies(x, y, c) for x in ps)]


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_linear_reduction_is_the_pairwise_one(name):
    module = parse_module(TEXTS[name])
    rng = random.Random(7)
    for func in [op for op in module.walk() if isinstance(op, FuncOp)]:
        nodes = collect_nodes(func)
        memo: dict = {}
        checked = 0
        for c in nodes:
            for x in nodes:
                assert S._dominates(x, c, memo) == S._dominates(x, c)
            dom = lambda x, c=c: S._dominates(x, c, memo)      # noqa: E731
            others = [n for n in nodes if n is not c]
            for _ in range(12):
                ps = rng.sample(others, rng.randint(0, min(len(others), 12)))
                assert S._same_queue_kept(ps, c, dom) == _pairwise_kept(ps, c)
                checked += 1
        assert checked == 12 * len(nodes)


def _schedule(text):
    """``text`` (already scheduled: the attributes are rewritten) scheduled again."""
    module = parse_module(text)
    for func in [op for op in module.walk() if isinstance(op, FuncOp)]:
        S.schedule_function(func, "list", fast=False)
    return print_module(module)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_same_waits_as_the_pairwise_reduction(name, monkeypatch):
    new = _schedule(TEXTS[name])
    monkeypatch.setattr(S, "_same_queue_kept", _pairwise_kept)
    real = S._dominates
    monkeypatch.setattr(S, "_dominates", lambda x, c, memo=None: real(x, c))
    old = _schedule(TEXTS[name])
    assert new == old
    assert "nkim.deps" in new
