"""The hazard checks' whole-tile summaries (runtime/hazard_tiles.py) answer as the general
access history does: on seeded faults (removed waits, buffers moved onto live ones) of
compiled kernels, a hazard-checked run with summaries reports the same hazard, with the same
message, or returns the same bits, as one with the general history for every root."""
from __future__ import annotations

import random

import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.compiler import parse_module
from nki_mlir.runtime import hazards
from nki_mlir.runtime.interpreter import decode
from test_seeded_faults import KERNELS, SEED, _run, seed_edge, seed_shift

#: kernels of test_seeded_faults.py (whole tiles, column blocks, PSUM accumulation, loops)
NAMES = ("layernorm", "attention", "tiled_matmul", "row_softmax", "seq_accumulate",
         "psum_accumulate", "column_partials", "reuse_tile", "nested_tiles", "matmul_bias",
         "ragged_2d", "transpose_roundtrip")
#: faults seeded per kernel and kind
PER_KERNEL = 5


def _outcome(program, args, tiles: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(hazards.Checker, "tiles", tiles)
    status, res = _run(program, args, mode="queues", hazards=True)
    if status == "error":
        return status, type(res).__name__, str(res)
    return status, [(a.dtype, a.shape, a.tobytes()) for a in res]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path_factory.mktemp("nki-cache")))
        out = []
        for i, (name, kernel, make_args) in enumerate(KERNELS):
            if name not in NAMES:
                continue
            all_args = make_args(np.random.default_rng(SEED * 1000 + i))
            ck = nki.compile(kernel, *all_args)
            args = tuple(a for a in all_args if isinstance(a, np.ndarray))
            out.append((name, ck.ir("nisa"), ck.target, args))
        return out


def test_summaries_report_what_the_general_history_reports(compiled, monkeypatch):
    rng = random.Random(SEED + 1)
    runs = errors = 0
    for name, text, target, args in compiled:
        modules = [parse_module(text)]
        for _ in range(PER_KERNEL):
            for f in (seed_edge(name, text, rng), seed_shift(name, text, target, rng)):
                if f is not None:
                    modules.append(f.module)
        for module in modules:
            program = decode(module)
            fast = _outcome(program, args, True, monkeypatch)
            slow = _outcome(program, args, False, monkeypatch)
            assert fast == slow, f"{name}: summaries {fast[:3]} vs general history {slow[:3]}"
            runs += 1
            errors += fast[0] == "error"
    assert runs >= 60 and errors >= 20, (runs, errors)    # the faults were really exercised


def test_whole_tiles_are_summarised(monkeypatch):
    """layernorm's tiles (one exact box each) keep summaries, not general histories."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from kernels import layernorm
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 128)).astype(np.float32)
    g, b = (rng.standard_normal((1, 128)).astype(np.float32) for _ in range(2))
    program = nki.compile(layernorm, x, g, b).program
    seen = []
    real = hazards.Checker.check

    def spy(self, inst, env):
        real(self, inst, env)
        seen.append(self)
    monkeypatch.setattr(hazards.Checker, "check", spy)
    program.run([x, g, b], hazards=True)
    roots = list(seen[-1].local.values())
    summarised = [rs for rs in roots if rs.hist is None and rs.key is not None]
    assert len(summarised) >= 10 and len(summarised) >= len(roots) - 2, \
        (len(summarised), len(roots))
