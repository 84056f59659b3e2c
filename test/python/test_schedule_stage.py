"""A program-order kernel call compiles up to placement; ``nisa-schedule`` runs when first needed.

(nki_mlir.driver.schedule_stage; the suite runs with NKI_MLIR_HAZARDS=1, so these tests turn
the hazard checks off to get the default program-order call of a user's machine.)
"""
import numpy as np
import pytest

import nki_mlir as nki
import kernels_for_tests as K
from nki_mlir.driver import compile as compiler
from nki_mlir.errors import NKIError
from nki_mlir.runtime import artifact, cache


@pytest.fixture
def xy():
    rng = np.random.default_rng(11)
    return tuple(rng.standard_normal((128, 512)).astype(np.float32) for _ in range(2))


@pytest.fixture
def program_order(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")


def _call(kernel, *args):
    out, compiled = kernel.run(args, {})
    return out, compiled[0]


def test_a_program_order_call_stops_before_nisa_schedule(xy, program_order):
    out, ck = _call(nki.jit(K.add), *xy)
    np.testing.assert_array_equal(out, xy[0] + xy[1])
    assert ck.stage == "placed"
    assert ck.manifest["pipeline"] == ["nki-legalize", "lower-nki-to-nisa", "nisa-allocate"]
    own = ck.own_ir("nisa")
    assert "nisa.alloc" in own and "nkim.offset" in own          # placed ...
    assert "nkim.deps" not in own and "nkim.queue" not in own    # ... but not scheduled
    manifest, _ = artifact.read_artifact(ck.artifact)            # a cache entry of its own
    assert manifest["stage"] == "placed" and manifest["cache_key"] != manifest["final"]["cache_key"]


def test_final_is_what_a_compile_of_the_whole_pipeline_makes(xy, program_order, tmp_path, monkeypatch):
    _, ck = _call(nki.jit(K.add), *xy)
    fin = ck.final()
    assert fin.stage == "final" and ck.final() is fin
    assert ck.ir("nisa") == fin.own_ir("nisa") and "nkim.deps" in fin.own_ir("nisa")
    assert fin.manifest["pipeline"][-1] == "nisa-schedule"
    # a fresh compile of the whole pipeline, in another cache, makes the same kernel
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path / "other"))
    cache.memory_clear()
    whole = nki.compile(K.add, *xy)
    assert whole.cache_hit is None and whole.own_ir("nisa") == fin.own_ir("nisa")
    drop = ("compile_seconds",)
    assert {k: v for k, v in whole.manifest.items() if k not in drop} == \
        {k: v for k, v in fin.manifest.items() if k not in drop}
    assert whole.estimate().latency_ns == ck.estimate().latency_ns


def test_final_is_cached_under_the_whole_pipelines_key(xy, program_order):
    _, ck = _call(nki.jit(K.add), *xy)
    fin = ck.final()
    assert nki.compile(K.add, *xy) is fin                         # memory hit
    cache.memory_clear()
    again = nki.compile(K.add, *xy)
    assert again.cache_hit == "disk" and again.own_ir("nisa") == fin.own_ir("nisa")
    cache.memory_clear()                                         # a placed disk hit ...
    _, placed = _call(nki.jit(K.add), *xy)
    assert placed.cache_hit == "disk" and placed.stage == "placed"
    assert placed.final().cache_hit == "disk"                    # ... finds the final entry


def test_a_compile_after_a_call_schedules_the_calls_placed_module(xy, program_order, monkeypatch):
    _, ck = _call(nki.jit(K.add), *xy)
    traced = []
    real = compiler.build_module
    monkeypatch.setattr(compiler, "build_module", lambda *a, **k: traced.append(1) or real(*a, **k))
    whole = nki.compile(K.add, *xy)
    assert whole is ck.final() and whole.stage == "final" and traced == []


def test_queue_mode_runs_of_a_placed_compile_use_the_schedule(xy, program_order):
    out, ck = _call(nki.jit(K.add), *xy)
    queued = ck.run(xy, {}, mode="queues", hazards=True)
    np.testing.assert_array_equal(queued[0], out)
    assert ck._final is not None and ck._final._program is not None


def test_hazard_checks_compile_the_whole_pipeline(xy, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")
    _, ck = _call(nki.jit(K.add), *xy)
    assert ck.stage == "final" and "nkim.deps" in ck.own_ir("nisa")


def test_ir_dumps_compile_the_whole_pipeline(xy, program_order, tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_DUMP_IR", str(tmp_path / "dump"))
    _, ck = _call(nki.jit(K.add), *xy)
    assert ck.stage == "final"
    assert sorted(p.name for p in (tmp_path / "dump").glob("*/*"))[-1] == "04-nisa-schedule.mlir"


def test_an_unknown_stage_is_an_error(xy):
    with pytest.raises(NKIError, match="stage='scheduled'"):
        compiler.compile_kernel(K.add, xy, {}, stage="scheduled")


def test_a_placed_compile_still_checks_affine_range_output_dependencies(program_order):
    import nki_mlir.language as nl

    @nki.jit
    def same_row(a):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(2):
            t = nl.load(a[i * 128:(i + 1) * 128, :])
            nl.store(out[0:128, :], t)
        return out

    with pytest.raises(NKIError) as info:
        same_row(np.zeros((256, 64), np.float32))
    assert info.value.code == "err_unexpected_output_dependencies"


def test_the_affine_range_check_reads_only_the_instructions_in_affine_loops(program_order, monkeypatch):
    """The accesses of the instructions outside every affine_range loop, which that check
    never reads, are not computed (half the check's time on an nki-library QKV kernel)."""
    import nki_mlir.language as nl
    from nki_mlir.passes import dependence, output_deps

    @nki.jit
    def rows(a):
        out = nl.ndarray((256, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        first = nl.load(a[0:128, :])           # outside the loop
        nl.store(out[0:128, :], first)
        for i in nl.affine_range(2):
            t = nl.load(a[i * 128:(i + 1) * 128, :])
            nl.store(out[i * 128:(i + 1) * 128, :], t)
        return out

    seen = []
    node_accesses = dependence.node_accesses

    def spy(op, cache=None):
        seen.append(op)
        return node_accesses(op, cache)
    monkeypatch.setattr(dependence, "node_accesses", spy)
    checked = []
    check = output_deps.check_output_dependencies
    monkeypatch.setattr(output_deps, "check_output_dependencies",
                        lambda func, nodes=None: (checked.append(func), check(func, nodes))[1])
    a = np.arange(256 * 64, dtype=np.float32).reshape(256, 64)
    np.testing.assert_array_equal(rows(a), np.concatenate([a[:128], a[128:]]))
    assert checked and seen
    assert all(any(output_deps._is_affine(l) for l in dependence.enclosing_loops(op)) for op in seen)
    every = [op for op in checked[0].walk() if dependence.is_instruction(op)]
    assert len(every) > len(seen)
