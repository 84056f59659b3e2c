"""SPMD grids (Beta 1), LNC launches (Beta 2) and the cross-core instructions.

Kernels: spmd_kernels_beta1.py (``neuronxcc.nki`` through the compat hook) and
spmd_kernels.py (``import nki`` style).  References are computed with NumPy.
"""
import inspect
import os

import numpy as np
import pytest

import spmd_kernels as K
import spmd_kernels_beta1 as B
import nki_mlir as nki
from nki_mlir.errors import NKIError, NKIRuntimeError, NKITypeError
from nki_mlir.frontend.spmd import SpmdInfo, nc, spmd_dim
from nki_mlir.runtime import spmd as rt

RNG = np.random.default_rng(4)
K_FILE = inspect.getsourcefile(K)
B_FILE = inspect.getsourcefile(B)
THIS = os.path.abspath(__file__)


def _rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _line(path: str, text: str) -> int:
    for i, line in enumerate(open(path).read().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(text)


def _assert_at(err: NKIError, path: str, text: str) -> None:
    """The error is located at the line of ``path`` containing ``text`` and shows it."""
    assert err.loc is not None, str(err)
    assert os.path.samefile(err.loc.file, path), (err.loc, path)
    assert err.loc.line == _line(path, text), (str(err), text)
    assert text.strip() in str(err)
    assert "Traceback" not in str(err)


# ===================================================================== Beta 1 grids


def test_1d_grid_program_id_in_slices():
    a, b = _rand(512, 64), _rand(512, 64)
    out = nki.simulate_kernel(B.axpy_rows[4], a, b)
    np.testing.assert_allclose(out, a * 0.5 + b, rtol=1e-6)
    # the tuple spelling used by the conformance runner, and the Beta 1 module's entry point
    np.testing.assert_allclose(B.nki.simulate_kernel(B.axpy_rows[(4,)], a, b), a * 0.5 + b, rtol=1e-6)


def test_2d_grid_ids_and_counts():
    a = _rand(256, 192)
    out = B.grid_2d[2, 3](a)
    ref = np.empty_like(a)
    offset = 2 * 1000 + 3 * 100 + 6 * 10 + 6 + 2 * 0.5
    for i in range(2):
        for j in range(3):
            blk = (slice(i * 128, (i + 1) * 128), slice(j * 64, (j + 1) * 64))
            ref[blk] = a[blk] * (10 * i + j) + offset
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_if_on_program_id():
    a = _rand(384, 64)
    out = B.pid_branch[3](a)
    ref = np.concatenate([-a[:128], a[128:256] + 1, a[256:] + 2])
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_no_grid_defaults_and_serial_order():
    a = _rand(128, 64)
    np.testing.assert_allclose(B.ids_and_counts(a), np.full_like(a, 100.0))  # id 0, 1 program, ndim 0
    # three instances all write block 0 in program-id order: the last (pid 2) wins
    np.testing.assert_allclose(B.ids_and_counts[3](a), np.full_like(a, 20 + 300 + 1000))


def test_grid_is_part_of_the_cache_key():
    a = _rand(128, 64)
    np.testing.assert_allclose(B.no_program_id[2](a), a * 2, rtol=1e-6)
    np.testing.assert_allclose(B.no_program_id[5](a), a * 5, rtol=1e-6)
    np.testing.assert_allclose(B.no_program_id(a), a, rtol=1e-6)


def test_one_compile_when_program_id_is_unused():
    a = _rand(128, 64)
    _, compiled = B.no_program_id[4].run((a,), {})
    assert len(compiled) == 4 and all(c is compiled[0] for c in compiled)



def test_one_trace_when_program_id_is_only_index_arithmetic(monkeypatch):
    """axpy_rows uses its id only in slices: one trace, the id read by each instance when
    it runs; NKI_MLIR_SHARED_LAUNCH=0 traces each instance, with the same outputs."""
    b = _rand(512, 64)
    out, compiled = B.axpy_rows[4].run((b, b), {})
    assert len(compiled) == 4 and all(c is compiled[0] for c in compiled)
    spmd = compiled[0].manifest["spmd"]
    assert spmd["symbolic_ids"] and not spmd["uses_program_id"]
    assert "nki.program_id(axis=0)" in compiled[0].own_ir("nki")
    np.testing.assert_allclose(out, b * 1.5, rtol=1e-6)
    monkeypatch.setenv("NKI_MLIR_SHARED_LAUNCH", "0")
    out0, compiled = B.axpy_rows[4].run((b, b), {})
    assert len({id(c) for c in compiled}) == 4
    assert [c.manifest["spmd"]["ids"] for c in compiled] == [[0], [1], [2], [3]]
    assert all(not c.manifest["spmd"].get("symbolic") for c in compiled)
    np.testing.assert_array_equal(out, out0)


def test_private_hbm_is_per_instance_and_shared_hbm_is_shared():
    a = _rand(256, 64)
    from_shared, from_private = B.private_vs_shared[2](a)
    # instance 1 runs after instance 0 and sees what it wrote in the *shared* scratch ...
    np.testing.assert_array_equal(from_shared[128:], a[:128])
    # ... but instance 0 ran first: block 1 of the scratch was still uninitialised (NaN)
    assert np.isnan(from_shared[:128]).all()
    # the private scratch of each instance only holds its own block
    assert np.isnan(from_private).all()


def test_instances_return_the_same_output_arrays():
    a = _rand(512, 64)
    b = _rand(512, 64)
    ck = [B.axpy_rows.compile_with((a, b), {}, spmd=SpmdInfo((4,), (i,))) for i in range(4)]
    launch = rt.Launch(cores=1)
    outs = [c.run((a, b), {}, launch=rt.Instance(launch, 0, (i,))) for i, c in enumerate(ck)]
    assert all(o[0] is outs[0][0] for o in outs)
    np.testing.assert_allclose(outs[0][0], a * 0.5 + b, rtol=1e-6)
    # a plain run (no launch) allocates its own output
    plain = ck[0].run((a, b), {})[0]
    assert plain is not outs[0][0]


def test_nc_markers_and_core_mapping():
    a = _rand(256, 192)
    ref = B.grid_2d[2, 3](a)
    np.testing.assert_allclose(B.grid_2d[nc(2), 3](a), ref, rtol=1e-6)
    np.testing.assert_allclose(B.grid_2d[B.nl.nc(2), 3](a), ref, rtol=1e-6)
    # spmd_dim(nc(2), 2): pids 0,1 on core 0 and 2,3 on core 1; spmd_dim(2, nc(2)): even/odd
    d = spmd_dim(nc(2), 2)
    assert d.size == 4 and [d.core_of(p) for p in range(4)] == [0, 0, 1, 1]
    e = 2 * B.nl.nc(2)
    assert e.size == 4 and [e.core_of(p) for p in range(4)] == [0, 1, 0, 1]
    assert B.nl.nc(2) * 2 == d
    dims, cores, lnc = B.grid_2d[d, 2].plan()
    assert [x.size for x in dims] == [4, 2] and cores == 2 and not lnc
    b = _rand(512, 64)
    np.testing.assert_allclose(B.axpy_rows[B.nl.spmd_dim(B.nl.nc(2), 2)](b, b), b * 1.5, rtol=1e-6)


# ====================================================================== Beta 2 LNC


def test_lnc2_program_id_and_counts():
    a = _rand(256, 64)
    out = K.lnc_scale[2](a)
    ref = np.concatenate([a[:128] * 1 + 120, a[128:] * 2 + 120])
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    # no brackets: LNC1, program_ndim() == 0, num_programs() == 1 (one instance: 128 rows)
    h = a[:128]
    np.testing.assert_allclose(K.lnc_scale(h), h + 10, rtol=1e-6)
    # kernel[1]: LNC1 with a one-dimensional grid
    np.testing.assert_allclose(K.lnc_scale[1](h), h + 110, rtol=1e-6)
    np.testing.assert_allclose(nki.simulate(K.lnc_scale[2])(a), ref, rtol=1e-6)


def test_lnc2_core_barrier_and_sendrecv_exchange():
    x = _rand(256, 64)
    out, swapped = K.lnc_exchange[2](x)
    halves = [x[:128], x[128:]]
    np.testing.assert_array_equal(out, np.concatenate([2 * halves[1], 2 * halves[0]]))
    np.testing.assert_array_equal(swapped, np.concatenate([halves[1], halves[0]]))


def test_lnc2_sendrecv_two_pipes_gpsimd_dma():
    x = RNG.integers(-1000, 1000, size=(256, 64)).astype(np.int32)
    out = K.lnc_ring_gpsimd[2](x)
    s = x[:128] + x[128:]
    np.testing.assert_array_equal(out, np.concatenate([s, s]))
    ir = K.lnc_ring_gpsimd.compile_with((x,), {}, spmd=SpmdInfo((2,), (0,), 2, 0, True)).ir("nisa")
    assert "dma_engine=gpsimd_dma" in ir and "nisa.sendrecv(" in ir


def test_lnc2_runs_on_trn3_too():
    x = _rand(256, 64)
    out, swapped = nki.jit(K.lnc_exchange.fn, target="trn3")[2](x)
    np.testing.assert_array_equal(swapped, np.concatenate([x[128:], x[:128]]))


# ========================================================================== errors


@pytest.mark.parametrize("launch,fragment", [
    (lambda: K.lnc_scale[3], "lnc_scale[3]: the launch bracket of an NKI 0.2+ kernel is the LNC degree, 1 or 2"),
    (lambda: K.lnc_scale[2, 2], "lnc_scale[2, 2]: the launch bracket of an NKI 0.2+ kernel is the LNC degree"),
    (lambda: K.lnc_scale[8], "is the LNC degree, 1 or 2"),
    (lambda: nki.jit(K.lnc_scale.fn, target="trn1")[2], "LNC2 (2 physical NeuronCores) needs trn2 or trn3"),
    (lambda: B.axpy_rows[nc(4)], "4 physical NeuronCores requested; a logical NeuronCore has at most 2"),
    (lambda: B.axpy_rows[nc(2), nc(2)], "at most one launch-grid dimension can be spread over physical cores"),
    (lambda: nki.jit(B.axpy_rows.fn, target="trn1")[nc(2)], "LNC2 (2 physical NeuronCores) needs trn2 or trn3"),
    (lambda: B.axpy_rows[0], "launch-grid entries must be positive ints or nl.nc(n) / nl.spmd_dim(...) markers, got 0"),
    (lambda: B.axpy_rows["4"], "got '4'"),
])
def test_bad_launch_is_located_at_the_launch(launch, fragment):
    a = _rand(512, 64)
    with pytest.raises(NKIError) as info:
        launch()(a, a)  # the launch line
    err = info.value
    assert fragment in str(err)
    assert err.category == "bad launch"
    assert err.loc is not None and os.path.samefile(err.loc.file, THIS)
    assert err.loc.line == _line(THIS, "launch()(a, a)  # the launch line")


def test_bad_markers():
    with pytest.raises(NKIError, match=r"nl.nc\(n\): n must be a positive int"):
        nc(0)
    with pytest.raises(NKIError, match="at most one factor can be spread"):
        spmd_dim(nc(2), nc(2))
    with pytest.raises(NKIError, match="already launched with a grid"):
        B.axpy_rows[2][2]


def test_cross_core_instruction_needs_lnc2():
    x = _rand(128, 64)
    with pytest.raises(NKITypeError) as info:
        K.barrier_without_lnc(x)
    assert "nisa.core_barrier works between the 2 NeuronCores of an LNC2 launch, but the kernel was " \
           "launched without brackets (LNC1)" in str(info.value)
    _assert_at(info.value, K_FILE, "nisa.core_barrier(data=out, cores=(0, 1))  # LNC1: error")
    with pytest.raises(NKITypeError) as info:
        K.barrier_without_lnc[1](x)
    assert "launched as kernel[1] on one core" in str(info.value)


def test_core_barrier_cores_must_be_0_1():
    x = _rand(128, 64)
    with pytest.raises(NKITypeError) as info:
        K.barrier_bad_cores[2](x)
    assert "cores=(0, 2) is not supported; only cores=(0, 1)" in str(info.value)
    _assert_at(info.value, K_FILE, "nisa.core_barrier(data=out, cores=(0, 2))  # cores: error")


def test_sendrecv_rank_and_dtype_errors():
    x = _rand(128, 64)
    with pytest.raises(NKITypeError) as info:
        K.sendrecv_bad_rank[2](x)
    assert "send_to_rank=2 is not a rank of an LNC2 launch (0 or 1)" in str(info.value)
    _assert_at(info.value, K_FILE, "send_to_rank=nl.program_id(0) + 1")
    with pytest.raises(NKIError) as info:
        K.sendrecv_dtype_mismatch[2](x)
    assert "'src' and 'dst' must have the same dtype" in str(info.value)
    _assert_at(info.value, K_FILE, "pipe_id=0)  # dtypes differ")


def test_barrier_the_other_core_never_reaches():
    x = _rand(128, 64)
    with pytest.raises(NKIRuntimeError) as info:
        K.lonely_barrier[2](x)
    assert ("nisa.core_barrier: core 0 waits for core 1 at core_barrier #1, but core 1 finished its "
            "kernel without getting there") in str(info.value)
    _assert_at(info.value, K_FILE, "nisa.core_barrier(data=out, cores=(0, 1))  # core 1 never arrives")


def test_mismatched_waits_time_out_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(rt, "BARRIER_TIMEOUT", 0.3)
    x = _rand(128, 64)
    with pytest.raises(NKIRuntimeError) as info:
        K.mismatched_waits[2](x)
    text = str(info.value)
    assert "timed out after 0.3 s waiting for core" in text
    assert "do not execute matching core_barrier / sendrecv sequences" in text
    # reported where the first core to give up waited (either of the two)
    assert info.value.loc.line in (_line(K_FILE, "# core 0 waits here"), _line(K_FILE, "# core 1 here"))


def test_cross_core_instruction_in_a_plain_run_is_a_runtime_error():
    x = _rand(256, 64)
    ck = K.lnc_exchange.compile_with((x,), {}, spmd=SpmdInfo((2,), (0,), 2, 0, True))
    with pytest.raises(NKIRuntimeError) as info:
        ck(x)
    assert "needs the two cores of an LNC2 launch" in str(info.value)
    _assert_at(info.value, K_FILE, "nisa.core_barrier(data=stage, cores=(0, 1))")


def test_program_id_axis_out_of_range():
    x = _rand(128, 64)
    with pytest.raises(NKITypeError) as info:
        K.program_id_bad_axis[2](x)
    assert "nl.program_id: axis=1 is out of range: the launch grid kernel[2] has 1 dimension(s)" \
        in str(info.value)
    _assert_at(info.value, K_FILE, "k = nl.program_id(axis=1)")
    with pytest.raises(NKITypeError) as info:
        K.program_id_bad_axis(x)
    assert "launched without a grid (program_ndim() is 0), so only axis 0 exists" in str(info.value)
    a = _rand(256, 128)
    with pytest.raises(NKITypeError) as info:
        B.bad_axis_2d[2, 2](a)
    assert "axis=2 is out of range: the launch grid kernel[2, 2] has 2 dimension(s) (axes 0..1)" \
        in str(info.value)
    _assert_at(info.value, B_FILE, "k = nl.program_id(2)")


@pytest.mark.parametrize("kernel,text", [
    (lambda: B.nested_grid_call, "r = helper_kernel[4](a)  # nested gridded call"),
    (lambda: B.nested_grid_object, "r = GRIDDED_HELPER(a)"),
    (lambda: K.calls_gridded, "y = copy_kernel[2](x)  # nested gridded launch: error"),
])
def test_nested_gridded_kernel(kernel, text):
    a = _rand(128, 64)
    with pytest.raises(NKITypeError) as info:
        kernel()(a)
    assert "cannot be called from inside another kernel" in str(info.value)
    assert info.value.code == "err_nested_kernel_with_spmd_grid"
    assert "[err_nested_kernel_with_spmd_grid]" in str(info.value)
    path = K_FILE if "copy_kernel" in text else B_FILE
    _assert_at(info.value, path, text)


def test_compile_a_launch_gives_one_compiled_kernel_per_instance(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_SHARED_LAUNCH", "0")   # (lnc_exchange is traced once else)
    x = _rand(256, 64)
    cks = nki.compile(K.lnc_exchange[2], x)
    assert [c.manifest["spmd"]["ids"] for c in cks] == [[0], [1]]
    assert [c.manifest["spmd"]["core"] for c in cks] == [0, 1]
    # the program id is a compile-time constant: the two specialisations read different rows
    assert cks[0].ir("nki") != cks[1].ir("nki")
    assert "nisa.core_barrier(" in cks[0].ir("nisa") and "nisa.sendrecv(" in cks[1].ir("nisa")
    trn3 = nki.compile(K.lnc_exchange[2], x, target="trn3")
    assert trn3[0].target == "trn3"
    with pytest.raises(NKIError, match="needs trn2 or trn3"):
        nki.compile(K.lnc_exchange[2], x, target="trn1")
