"""The legacy entry points: nki.simulate_kernel, nki.baremetal, nki.benchmark, nki.profile and
nki.jit(mode=...) -- all run on the ISA interpreter (nki_mlir/entry.py).

Kernels: spmd_kernels.py (``import nki`` style) and spmd_kernels_beta1.py (Beta 1).
"""
import json
import os
import warnings

import numpy as np
import pytest

import spmd_kernels as K
import spmd_kernels_beta1 as B
import nki_mlir
import nki_mlir.beta1
from nki_mlir import entry
from nki_mlir.errors import NKIError

RNG = np.random.default_rng(6)


@pytest.fixture(autouse=True)
def _fresh_notes():
    entry._NOTED.clear()
    entry.set_latency_estimator(None)
    yield
    entry._NOTED.clear()
    entry.set_latency_estimator(None)


def _x(rows=128):
    return RNG.standard_normal((rows, 64)).astype(np.float32)


def _notes(record, api=None):
    out = [w for w in record if issubclass(w.category, entry.NKIInterpreterNote)]
    return [w for w in out if api is None or str(w.message).startswith(api + ":")]


def test_exported_from_both_fronts():
    for mod in (nki_mlir, nki_mlir.beta1, B.nki):
        for name in ("simulate_kernel", "baremetal", "benchmark", "profile", "jit"):
            assert callable(getattr(mod, name)), (mod, name)
    assert B.nki.baremetal is entry.baremetal


def test_simulate_kernel_kernel_launch_and_function():
    x = _x()
    np.testing.assert_array_equal(nki_mlir.simulate_kernel(K.copy_kernel, x), x)
    np.testing.assert_array_equal(nki_mlir.simulate_kernel(K.copy_kernel.fn, x), x)
    y = _x(256)
    out, swapped = nki_mlir.simulate_kernel(K.lnc_exchange[2], y)
    np.testing.assert_array_equal(swapped, np.concatenate([y[128:], y[:128]]))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        nki_mlir.simulate_kernel(K.copy_kernel, x)
    assert not _notes(rec)  # a simulation says nothing


@pytest.mark.parametrize("style", ["bare", "called", "wrapper", "jit_kernel"])
def test_baremetal_decorator_forms(style):
    x = _x()
    if style == "bare":
        fn = nki_mlir.baremetal(K.copy_kernel.fn)
    elif style == "called":
        fn = nki_mlir.baremetal(save_neff_name="file.neff", save_trace_name="profile.ntff",
                                additional_compile_opt="--verbose")(K.copy_kernel.fn)
    elif style == "wrapper":
        fn = nki_mlir.baremetal()(K.copy_kernel)
    else:
        fn = nki_mlir.baremetal(K.copy_kernel)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(fn(x), x)
        np.testing.assert_array_equal(fn(x + 1), x + 1)
    notes = _notes(rec, "nki.baremetal")
    assert len(notes) == 1  # once per process
    assert "ISA interpreter" in str(notes[0].message) and "no NEFF/NTFF" in str(notes[0].message)
    assert notes[0].filename == os.path.abspath(__file__)  # reported at the user's call


def test_baremetal_grid_and_artifacts_dir(tmp_path):
    y = _x(256)
    fn = nki_mlir.baremetal(K.lnc_scale, artifacts_dir=str(tmp_path / "art"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn[2](y)
    np.testing.assert_allclose(out, np.concatenate([y[:128] + 120, y[128:] * 2 + 120]), rtol=1e-6)
    subdirs = sorted(os.listdir(tmp_path / "art"))
    assert len(subdirs) == 2  # one specialisation per program instance
    for d in subdirs:
        files = set(os.listdir(tmp_path / "art" / d))
        assert {"manifest.json", "kernel.nisa.mlir"} <= files
    manifest = json.loads((tmp_path / "art" / subdirs[0] / "manifest.json").read_text())
    assert manifest["spmd"]["grid"] == [2] and manifest["spmd"]["lnc"] is True
    x = _x()
    nki_mlir.baremetal(K.copy_kernel, artifacts_dir=str(tmp_path / "one"))(x)
    assert "kernel.nisa.mlir" in os.listdir(tmp_path / "one")


@pytest.mark.parametrize("mode", ["baremetal", "auto", "jax", "torchxla", "benchmark", "simulation"])
def test_jit_modes_run_on_the_interpreter(mode):
    k = nki_mlir.jit(K.copy_kernel.fn, mode=mode)
    x = _x()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(k(x), x)
        np.testing.assert_array_equal(k(x), x)
    notes = _notes(rec)
    if mode == "simulation":
        assert not notes
    else:
        assert len(notes) == 1 and str(notes[0].message).startswith(f"nki.jit(mode={mode!r}):")
    if mode == "benchmark":
        assert k.benchmark_result.nc_latency.get_latency_percentile(50) > 0


def test_jit_mode_beta1_decorator_and_launch():
    k = B.nki.jit(mode="baremetal")(B.axpy_rows.fn)
    a, b = _x(256), _x(256)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_allclose(k[2](a, b), a * 0.5 + b, rtol=1e-6)
    assert len(_notes(rec, "nki.jit(mode='baremetal')")) == 1


def test_jit_unknown_mode():
    with pytest.raises(NKIError, match=r"nki.jit\(mode='hardware'\): mode must be one of"):
        nki_mlir.jit(K.copy_kernel.fn, mode="hardware")


def test_benchmark_reports_the_cost_model_estimate():
    fn = nki_mlir.benchmark(warmup=2, iters=5, save_neff_name="file.neff")(K.copy_kernel.fn)
    assert fn.benchmark_result.nc_latency.get_latency_percentile(50) is None  # exists before a call
    x = _x()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(fn(x), x)
    assert len(_notes(rec, "nki.benchmark")) == 1
    lat = fn.benchmark_result.nc_latency
    assert entry.latency_estimator() is not None and lat.available
    est = nki_mlir.compile(K.copy_kernel, x).estimate()
    values = {lat.get_latency_percentile(p) for p in entry.PERCENTILES}
    assert len(values) == 1  # a deterministic model: one number for every percentile
    assert values.pop() == pytest.approx(est.latency_us)
    assert 0 < est.latency_us < 100


def test_benchmark_positional_form_returns_outputs():
    x = _x()
    fn = nki_mlir.benchmark(K.copy_kernel, 1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(fn(x), x)
    assert fn.options["warmup"] == 1 and fn.options["iters"] == 3
    assert fn.benchmark_result.nc_latency.get_latency_percentile(99) > 0


@pytest.mark.parametrize("p", [5, 50.0, "50", -1, 101, True])
def test_benchmark_bad_percentile(p):
    fn = nki_mlir.benchmark(K.copy_kernel.fn)
    with pytest.raises(NKIError) as info:
        fn.benchmark_result.nc_latency.get_latency_percentile(p)
    assert "available percentiles are 0, 1, 10, 25, 50, 90, 99, 100" in str(info.value)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"warmup": -1}, "warmup must be an int >= 0"),
    ({"iters": 0}, "iters must be an int >= 1"),
    ({"iters": 2.5}, "iters must be an int >= 1"),
])
def test_benchmark_bad_arguments(kwargs, fragment):
    with pytest.raises(NKIError, match=fragment):
        nki_mlir.benchmark(**kwargs)


def test_latency_hook_float_and_mapping():
    seen = []

    def est(record):
        seen.append(record)
        return 12.5

    entry.set_latency_estimator(est)
    fn = nki_mlir.benchmark(K.lnc_scale, warmup=3, iters=7)
    y = _x(256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn[2](y)
    rec = seen[-1]
    assert rec.name == "lnc_scale" and len(rec.compiled) == 2 and (rec.warmup, rec.iters) == (3, 7)
    assert rec.target == "trn2"
    assert fn.benchmark_result.nc_latency.get_latency_percentile(99) == 12.5
    entry.set_latency_estimator(lambda r: {50: 3.0, 99: 4.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(y[:128])
    lat = fn.benchmark_result.nc_latency
    assert (lat.get_latency_percentile(50), lat.get_latency_percentile(99), lat.get_latency_percentile(0)) \
        == (3.0, 4.0, None)


def test_profile_writes_a_summary(tmp_path):
    fn = nki_mlir.profile(working_directory=str(tmp_path), save_neff_name="file.neff",
                          save_trace_name="profile.ntff", profile_nth=2)(K.copy_kernel.fn)
    x = _x()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(fn(x), x)
        assert not (tmp_path / "profile.json").exists()  # profile_nth=2: not yet
        fn(x)
    assert len(_notes(rec, "nki.profile")) == 1
    summary = json.loads((tmp_path / "profile.json").read_text())
    assert summary["kernel"] == "copy_kernel" and summary["api"] == "nki.profile"
    assert summary["instructions"] >= 2
    assert summary["latency_us"]["50"] == pytest.approx(summary["instance_latency_us"])
    assert summary["instance_latency_us"] > 0
    from nki_mlir.perf.trace import validate_trace
    assert validate_trace(json.loads((tmp_path / "profile.trace.json").read_text())) == []
    assert 'class="track"' in (tmp_path / "profile.html").read_text()
    assert "estimated latency" in (tmp_path / "profile.txt").read_text()
    # an existing summary is only replaced with overwrite=True
    again = nki_mlir.profile(K.copy_kernel, working_directory=str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NKIError, match="already exists; pass overwrite=True"):
            again(x)
        nki_mlir.profile(K.copy_kernel, working_directory=str(tmp_path), overwrite=True)(x)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"profile_nth": 0}, "profile_nth must be an int >= 1"),
])
def test_profile_bad_arguments(kwargs, fragment):
    with pytest.raises(NKIError, match=fragment):
        nki_mlir.profile(**kwargs)


def test_profile_relative_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.ones((128, 64), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nki_mlir.profile(K.copy_kernel, working_directory="prof")(x)
    assert (tmp_path / "prof" / "profile.json").exists()


def test_unwrap_entry_wrappers():
    import spmd_kernels as k2
    wrapped = nki_mlir.baremetal(k2.copy_kernel)
    assert entry.unwrap(wrapped) is k2.copy_kernel
    assert entry.unwrap(wrapped[2]).grid == (2,)
