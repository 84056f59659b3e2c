"""Beta 1 kernel-level checks, nki.typing, neuronxcc.nki.compiler (ncc) and the Beta 1-only
nl functions (static_cast, loop_reduce, atomic_rmw, finfo).

Beta 2 kernels used here are defined in this module (it does not import neuronxcc, so they
compile with Beta 2 rules); the Beta 1 kernels live in beta1_checks_kernels.py.
"""
import inspect
import os
import warnings

import ml_dtypes
import numpy as np
import pytest

import beta1_checks_kernels as K
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
import nki_mlir.typing as nt
from nki_mlir.errors import NKIAllocationError, NKIError, NKIKernelWarning, NKITypeError

FILE = inspect.getsourcefile(K)
HERE = os.path.abspath(__file__)
RNG = np.random.default_rng(7)


def _line(text: str, file: str = FILE) -> int:
    hits = [i for i, line in enumerate(open(file).read().splitlines(), 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def _raises(fn, *args, cls=NKIError, code=None, fragment="", marker=None, file=FILE):
    with pytest.raises(cls) as info:
        fn(*args)
    err, text = info.value, str(info.value)
    assert fragment in text, text
    if code is not None:
        assert err.code == code and f"[{code}]" in text, text
    assert err.loc is not None and os.path.samefile(err.loc.file, file), text
    if marker is not None:
        assert err.loc.line == _line(marker, file), (err.loc, text)
        assert marker in text.splitlines()[-2]  # the source line is shown
    assert "Traceback" not in text
    return err


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------ nki.typing


def test_typing_annotation_objects():
    assert nt.tensor[128, 512].shape == (128, 512) and not nt.tensor[128, 512].mutable
    assert nt.tensor[(64, 32)].shape == (64, 32)
    ann = nt.tensor[[4, 8], nl.bfloat16]
    assert ann.shape == (4, 8) and ann.dtype == np.dtype(ml_dtypes.bfloat16)
    assert nt.tensor[4, 8, nl.float32].dtype == np.float32
    assert nt.mutable_tensor.mutable and nt.mutable_tensor[2, 2].mutable
    assert nt.tensor[nt.mutable].mutable and not nt.tensor[nt.immutable].mutable
    assert nt.tensor.shape is None and repr(nt.tensor[128, 512]) == "nt.tensor[[128, 512]]"
    with pytest.raises(TypeError):
        nt.tensor[128, "x"]


def test_annotation_matching_shape_runs():
    a = f32(128, 512)
    np.testing.assert_allclose(K.annotated(a), np.exp(a), rtol=1e-5)


def test_annotation_shape_mismatch_at_parameter():
    err = _raises(K.annotated_bad_shape, f32(128, 512), cls=NKITypeError,
                  code="err_annotation_shape_mismatch", marker="# BAD_SHAPE",
                  fragment="shape of 'a[128, 512]' does not match the expected shape of [128, 256]")
    assert err.loc.col == _col("a: nt.tensor[128, 256]")


def test_annotation_dtype_mismatch():
    _raises(K.annotated_bad_dtype, f32(128, 512), cls=NKITypeError, marker="# BAD_DTYPE",
            fragment="dtype of 'a' is float32 but its annotation nt.tensor[[128, 512], bfloat16]")


def test_string_annotation_is_evaluated():
    a = f32(64, 64)
    np.testing.assert_array_equal(K.annotated_string(a), a)
    _raises(K.annotated_string, f32(64, 32), cls=NKITypeError, code="err_annotation_shape_mismatch",
            marker="# STRING_ANNOTATION")


def test_annotated_assignment_in_body_runs():
    a = f32(128, 512)
    np.testing.assert_array_equal(K.annotated_local(a), a)


def test_annotated_assignment_check():
    """``name: nt.tensor[...] = value`` in a kernel body is checked (the Beta 1 error page's
    example form)."""
    _raises(K.annotated_local_bad, f32(128, 512), cls=NKITypeError, marker="# ANN_BAD",
            code="err_annotation_shape_mismatch",
            fragment="shape of 't[128, 512]' does not match the expected shape of [128, 256]")
    a = f32(128, 512)
    np.testing.assert_array_equal(K.annotated_local(a), a)


@nki.jit
def beta2_annotated(a: nt.tensor[32, 32]):  # BETA2_ANNOTATED
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


def test_beta2_annotation_is_checked_too():
    a = f32(32, 32)
    np.testing.assert_array_equal(beta2_annotated(a), a)
    _raises(beta2_annotated, f32(32, 16), cls=NKITypeError, code="err_annotation_shape_mismatch",
            marker="# BETA2_" + "ANNOTATED", file=HERE)


def test_tensor_annotation_given_a_constant():
    @nki.jit
    def k(a, n: nt.tensor):
        return a
    with pytest.raises(NKITypeError, match="is annotated nt.tensor but its argument is the compile-time constant 3"):
        k(f32(4, 4), 3)


def _col(text: str) -> int:
    for line in open(FILE).read().splitlines():
        if text in line:
            return line.index(text) + 1
    raise AssertionError(text)


# ------------------------------------------------------------------ mutability


def test_write_to_immutable_parameter():
    _raises(K.writes_immutable, f32(128, 64), code="err_cannot_update_immutable_parameter",
            marker="# IMMUTABLE_WRITE", fragment="cannot update immutable parameter 'in_tensor'")


def test_write_to_a_view_of_an_immutable_parameter():
    _raises(K.writes_immutable_view, f32(128, 64), code="err_cannot_update_immutable_parameter",
            marker="# IMMUTABLE_VIEW_WRITE", fragment="cannot update immutable parameter 'a'")


def test_mutable_parameter_written_and_returned():
    a = f32(128, 64)
    ref = np.exp(a)
    got = K.writes_mutable(a)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    np.testing.assert_allclose(a, ref, rtol=1e-5)  # the caller's array was updated


def test_mutable_parameter_not_returned():
    _raises(K.mutable_not_returned, f32(128, 64), code="err_mutable_parameter_not_returned",
            marker="# MUTABLE_NOT_RETURNED", fragment="mutable kernel parameter 'in_tensor' is written")


def test_legacy_output_argument_style_may_write_parameters():
    a, out = f32(128, 64), np.zeros((128, 64), np.float32)
    assert K.legacy_output_argument(a, out) is None
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-5)


@nki.jit
def beta2_writes_input(a, out):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_beta2_may_write_and_return_parameters():
    a, out = f32(16, 8), np.zeros((16, 8), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(beta2_writes_input(a, out), a)
    np.testing.assert_array_equal(out, a)


# ---------------------------------------------------------- output not written


def test_output_never_written_beta1():
    _raises(K.output_not_written, f32(128, 64), code="err_tensor_output_not_written_to",
            marker="# OUTPUT_NOT_WRITTEN", fragment="kernel output 0 ('out') is never written")


def test_output_written_only_in_a_zero_trip_loop():
    # the kernel's Python runs: a loop that runs 0 times never runs its body, so nothing
    # writes the output (the AST front used to compile the dead body and say so)
    _raises(K.output_dead_loop, f32(128, 64), code="err_tensor_output_not_written_to",
            marker="# DEAD_LOOP", fragment="is never written")


def test_legacy_kernel_writing_nothing():
    _raises(K.legacy_writes_nothing, f32(128, 64), np.zeros((128, 64), np.float32),
            code="err_tensor_output_not_written_to", marker="# LEGACY_NOTHING",
            fragment="returns no output and writes none of its parameters")


def test_output_written_through_views():
    a = f32(128, 64)
    np.testing.assert_array_equal(K.output_written_by_view(a), a)


@nki.jit
def beta2_unwritten(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    return out  # BETA2_UNWRITTEN


def test_output_never_written_is_a_located_warning_in_beta2():
    with pytest.warns(NKIKernelWarning) as rec:
        beta2_unwritten(f32(8, 8))
    w = [r for r in rec if issubclass(r.category, NKIKernelWarning)][0]
    assert w.lineno == _line("# BETA2_" + "UNWRITTEN", HERE) and os.path.samefile(w.filename, HERE)
    msg = str(w.message)
    assert "kernel output 0 ('out') is never written" in msg
    assert "[err_tensor_output_not_written_to]" in msg
    assert msg.startswith(f"{HERE}:{w.lineno}:")


def test_shared_constant_output_counts_as_written():
    @nki.jit
    def k(a):
        return nl.shared_constant(np.arange(8, dtype=np.float32).reshape(2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NKIKernelWarning)
        np.testing.assert_array_equal(k(f32(2, 2)), np.arange(8, dtype=np.float32).reshape(2, 4))


# ---------------------------------------------------------------- ncc allocation


def _nki_ir(kernel, *args) -> str:
    return kernel.compile(*args).ir("nki")


def test_sbuf_mod_alloc_pins_the_address():
    a = f32(128, 512)
    np.testing.assert_allclose(K.mod_alloc_copy(a), np.exp(a), rtol=1e-5)
    ir = _nki_ir(K.mod_alloc_copy, a)
    assert ir.count("address=[0, 4096]") == 1, ir


def test_psum_mod_alloc_is_a_bank_offset():
    a, b = f32(128, 128), f32(128, 512)
    np.testing.assert_allclose(K.psum_mod_alloc(a, b), a.T @ b, rtol=1e-4, atol=1e-4)
    assert "address=[0, 6144]" in _nki_ir(K.psum_mod_alloc, a, b)  # bank 3 * 2048


def test_psum_alloc_function():
    a, b = f32(128, 128), f32(128, 512)
    np.testing.assert_allclose(K.psum_func_alloc(a, b), a.T @ b, rtol=1e-4, atol=1e-4)
    assert "address=[0, 10240]" in _nki_ir(K.psum_func_alloc, a, b)  # bank 5 * 2048
    _raises(K.psum_func_bad, f32(4, 4), cls=NKITypeError, marker="# PSUM_BAD",
            fragment="must return (bank_id, start_partition, byte_addr) as compile-time ints for "
                     "the tile index (), got (0, 0)")


def test_sbuf_alloc_function_is_evaluated_at_compile_time():
    a = f32(128, 512)
    np.testing.assert_allclose(K.func_alloc(a), np.exp(a), rtol=1e-5)
    ir = _nki_ir(K.func_alloc, a)
    assert "address=[0, 8192]" in ir and "address=[0, 16384]" in ir


def test_mod_alloc_tiles_need_block_dims():
    _raises(K.tiles_without_block_dims, f32(128, 512), marker="# MULTI",
            fragment="num_free_tiles=(2,) needs one entry per block dim []")


def test_initialised_tensor_with_direct_allocation():
    _raises(K.zeros_with_alloc, f32(128, 512), cls=NKITypeError, marker="# ZEROS_ALLOC",
            code="err_tensor_creation_on_scratchpad_with_init_value_not_supported")


def test_allocation_function_with_the_wrong_signature():
    _raises(K.bad_alloc_func, f32(128, 512), marker="# BAD_FUNC",
            fragment="num_elems() takes 1 positional argument")


def test_overlapping_direct_allocations_and_force_auto_alloc():
    a = f32(128, 512)
    with pytest.raises(NKIAllocationError, match="overlaps tensor"):
        K.overlapping(a)
    np.testing.assert_allclose(K.overlapping_auto(a), np.exp(a), rtol=1e-5)


def test_ncc_decorators_and_no_reorder():
    a = f32(128, 64)
    np.testing.assert_allclose(K.decorated(a), np.exp(a), rtol=1e-5)
    assert "nisa.no_reorder_begin" in _nki_ir(K.decorated, a)
    import nki_mlir.beta1.compiler as ncc
    f = lambda x: x  # noqa: E731
    for deco in (ncc.enable_stack_allocator, ncc.skip_middle_end_transformations, ncc.force_auto_alloc,
                 ncc.multi_buffer):
        assert deco(f) is f and deco()(f) is f
    assert ncc.multi_buffer(factor=3)(f) is f and ncc.enable_stack_allocator(log_level=10)(f) is f
    with ncc.allocation_scope():
        pass
    assert ncc.sbuf.auto_alloc().nki_buffer_name == "sbuf" and repr(ncc.psum.mod_alloc(base_bank=1)) == \
        "ncc.psum.mod_alloc(base_bank=1)"


def test_allocation_scope_in_a_kernel_runs_its_body():
    a = f32(128, 64)
    np.testing.assert_array_equal(K.uses_allocation_scope(a), a * 2)


# ---------------------------------------------------------------- Beta 1-only nl


def test_static_cast():
    a = f32(128, 64) * 3
    got = K.static_cast_bf16(a)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), a.astype(ml_dtypes.bfloat16).astype(np.float32))


def test_loop_reduce_accumulates_in_place():
    a = f32(512, 512)
    ref = a.reshape(4, 128, 512).sum(axis=0)
    np.testing.assert_allclose(K.loop_reduce_sum(a), ref, rtol=1e-5, atol=1e-5)


def test_loop_reduce_into_a_subscript():
    a = f32(384, 512)
    np.testing.assert_array_equal(K.loop_reduce_max_subscript(a), a.reshape(3, 128, 512).max(axis=0))


def test_loop_reduce_loops_stay_rolled():
    """The accumulator is updated in place and keeps its identity: the loops stay rolled."""
    from nki_mlir.frontend.trace_build import last_loop_report
    a = f32(384, 512)
    np.testing.assert_allclose(K.loop_reduce_annotated(a), a.reshape(3, 128, 512).sum(axis=0),
                               rtol=1e-5, atol=1e-5)
    for kernel in (K.loop_reduce_sum, K.loop_reduce_max_subscript, K.loop_reduce_annotated):
        nki.compile(kernel, f32(384, 512), use_cache=False)
        report = last_loop_report()
        assert report and all(how == "rolled" for how, _ in report.values()), report


def test_loop_reduce_result_only_assigned():
    _raises(K.loop_reduce_as_operand, f32(128, 512), cls=NKITypeError, marker="# OPERAND",
            fragment="the value of nl.loop_reduce, which only an assignment to the accumulator takes")
    _raises(K.loop_reduce_no_accumulator, f32(128, 64), cls=NKITypeError, marker="# NO_ACC",
            fragment="nl.loop_reduce: the accumulator 'fresh' is not defined")


def test_loop_reduce_needs_an_accumulator():
    _raises(K.loop_reduce_unassigned, f32(128, 64), cls=NKITypeError, marker="# UNASSIGNED",
            fragment="nl.loop_reduce: assign its result to the accumulator tile")


def test_atomic_rmw_direct():
    a, b = f32(128, 64), f32(128, 64)
    np.testing.assert_allclose(K.atomic_add_direct(a, b), a + b, rtol=1e-6)


def test_atomic_rmw_indirect_accumulates_repeated_indices():
    table = f32(16, 64)
    idx = np.array([3, 0, 3, 15, 7, 3, 0, 9], np.int32).reshape(8, 1)
    vals = f32(8, 64)
    ref = table.copy()
    np.add.at(ref, idx[:, 0], vals)
    np.testing.assert_allclose(K.atomic_add_indirect(table, idx, vals), ref, rtol=1e-5, atol=1e-6)


def test_atomic_rmw_only_adds():
    _raises(K.atomic_bad_op, f32(128, 64), cls=NKITypeError, marker="# ATOMIC_BAD_OP",
            fragment="op=ufunc <ufunc 'multiply'> is not a supported op (allowed: nl.add)")


def test_softmax_beta1_call_forms():
    a = f32(128, 64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(K.softmax_beta1(a), 2 * ref, rtol=1e-4, atol=1e-6)


def test_finfo():
    import nki_mlir.beta1.language as nl1
    assert nl1.finfo(nl1.bfloat16).max == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert nl1.finfo(np.float32).eps == np.finfo(np.float32).eps
    with pytest.raises(NKITypeError):
        nl1.finfo(nl1.int32)
