"""``timed_run`` returns a :class:`LazyEstimate` (perf/estimate.py): the figures beyond the
latency, instruction count and notes are computed on first access, and they equal the eager
:class:`Estimate` of the same run field by field, with and without slices, on kernels with
DMAs, matmuls, warnings and several queues; it compares, copies and pickles as an Estimate."""
import copy
import dataclasses
import os
import pickle
import sys

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.perf.estimate import LAZY_FIELDS, Estimate, LazyEstimate
from nki_mlir.perf.targets import target_model
from nki_mlir.perf.walk import timed_run

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import kernels as EX  # noqa: E402

RNG = np.random.default_rng(1)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "tiled_matmul": (EX.tiled_matmul, (_f32(512, 256).astype(ml_dtypes.bfloat16),
                                       _f32(512, 1024).astype(ml_dtypes.bfloat16))),
    "layernorm": (EX.layernorm, (_f32(256, 512), _f32(1, 512), _f32(1, 512))),
    "attention": (EX.attention, (_f32(256, 128), _f32(256, 128), _f32(256, 128))),
}


def _compiled(name):
    kernel, args = CASES[name]
    ck = nki.compile(kernel, *args, use_cache=False)
    return ck.program, target_model(ck.target)


@pytest.mark.parametrize("keep_slices", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_lazy_fields_equal_eager(name, keep_slices):
    prog, model = _compiled(name)
    eager = timed_run(prog, model, keep_slices=keep_slices, lazy=False)
    lazy = timed_run(prog, model, keep_slices=keep_slices)
    assert type(eager) is Estimate and type(lazy) is LazyEstimate
    assert not set(LAZY_FIELDS) & set(vars(lazy))          # nothing computed yet
    assert lazy.latency_ns == eager.latency_ns and lazy.instructions == eager.instructions
    assert lazy.notes == eager.notes
    for f in dataclasses.fields(Estimate):
        assert getattr(lazy, f.name) == getattr(eager, f.name), f.name
    assert set(LAZY_FIELDS) <= set(vars(lazy))             # all computed on first access
    assert lazy == eager and eager == lazy
    assert eager.tracks and eager.critical_path and eager.bound_ns > 0
    assert bool(eager.slices) == keep_slices
    # a second lazy run compares equal before any of its fields was read
    assert timed_run(prog, model, keep_slices=keep_slices) == eager


def test_lazy_copy_pickle_assign():
    prog, model = _compiled("tiled_matmul")
    eager = timed_run(prog, model, keep_slices=False, lazy=False)
    for clone in (copy.copy(timed_run(prog, model, keep_slices=False)),
                  copy.deepcopy(timed_run(prog, model, keep_slices=False)),
                  pickle.loads(pickle.dumps(timed_run(prog, model, keep_slices=False)))):
        assert type(clone) is Estimate and clone == eager
    lazy = timed_run(prog, model, keep_slices=False)
    lazy.warnings = []                       # assigned before the figures: kept
    assert lazy.warnings == [] and lazy.tracks == eager.tracks
    assert eager.warnings and lazy != eager
    assert dataclasses.replace(timed_run(prog, model, keep_slices=False), kernel="k") \
        == dataclasses.replace(eager, kernel="k")
    assert repr(timed_run(prog, model, keep_slices=False)).endswith(repr(eager)[len("Estimate"):])


def test_long_runs_summarized_eagerly(monkeypatch):
    """Beyond ``summary.LAZY_RECORDS`` records the figures are computed at once (the
    timeline is not kept alive by the estimate)."""
    from nki_mlir.perf import summary
    prog, model = _compiled("layernorm")
    lazy = timed_run(prog, model, keep_slices=False)
    monkeypatch.setattr(summary, "LAZY_RECORDS", lazy.instructions - 1)
    eager = timed_run(prog, model, keep_slices=False)
    assert type(lazy) is LazyEstimate and type(eager) is Estimate and eager == lazy
