"""NkiTensor views (nki_spec.md section 2.5) end to end: frontend -> memref views ->
nisa-allocate / nisa-schedule -> interpreter, checked against NumPy indexing.

Kernels: views_kernels.py.  Every view shares storage with its source, so reads through a
view see the source's data and writes through a view land in it.
"""
import inspect
import os

import ml_dtypes
import numpy as np
import pytest

import views_kernels as K
from nki_mlir.errors import NKIError, NKIRuntimeError, NKITypeError

BF16 = ml_dtypes.bfloat16
FILE = inspect.getsourcefile(K)
RNG = np.random.default_rng(7)


def _rand(shape, dt=np.float32):
    return RNG.standard_normal(shape).astype(dt)


def _same(got, ref):
    got = np.asarray(got)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(ref).view(np.uint8))


# ---------------------------------------------------------------------- HBM views


@pytest.mark.parametrize("dt", [np.float32, BF16])
def test_hbm_permute(dt):
    x = _rand((4, 8, 16), dt)
    _same(K.hbm_permute(x), x.transpose(2, 0, 1))


@pytest.mark.parametrize("dt", [np.float32, BF16])
@pytest.mark.parametrize("f", [1, 64, 512])
def test_hbm_broadcast_partitions(dt, f):
    g = _rand((1, f), dt)
    _same(K.hbm_broadcast_rows(g), np.broadcast_to(g, (128, f)))


def test_views_of_views_compose():
    x = _rand((8, 64, 32))
    _same(K.hbm_view_chain(x), np.ascontiguousarray(x[3][:, 4:20:2].T))


@pytest.mark.parametrize("dt", [np.float32, BF16])
def test_rearrange(dt):
    x = _rand((128, 64), dt)
    _same(K.hbm_rearrange(x), x.reshape(128, 4, 16).transpose(0, 2, 1))


def test_reshape_expand_squeeze():
    x = _rand((128, 64))
    _same(K.hbm_reshape_expand(x), x.reshape(2, 64, 64))


def test_ap_scalar_offset_loop_index():
    x = _rand((4, 128, 32))
    _same(K.hbm_ap_blocks(x), x)


@pytest.mark.parametrize("which", [0, 5, 7])
def test_select_runtime_index(which):
    x = _rand((8, 128, 64))
    _same(K.hbm_select_dynamic(x, np.array([[which]], np.int32)), x[which])


def test_select_runtime_index_out_of_bounds_is_located():
    x = _rand((8, 128, 64))
    with pytest.raises(NKIRuntimeError) as info:
        K.hbm_select_dynamic(x, np.array([[8]], np.int32))
    assert "out-of-bounds" in str(info.value) and "size 8" in str(info.value)
    assert info.value.loc is not None and os.path.samefile(info.value.loc.file, FILE)


def test_subscript_with_runtime_index():
    x = _rand((8, 128, 64))
    _same(K.select_subscript(x, np.array([[6]], np.int32)), x[6, :, 16:48])


@pytest.mark.parametrize("which,col", [(0, 0), (3, 40), (7, 48)])
def test_register_select_and_scalar_offset(which, col):
    x = _rand((8, 128, 64))
    _same(K.register_select(x, which, col), x[which, :, col:col + 16])


def test_register_scalar_offset_out_of_bounds_is_a_runtime_error():
    x = _rand((8, 128, 64))
    with pytest.raises(NKIRuntimeError) as info:
        K.register_select(x, 0, 49)  # free elements [49, 65) of a 64-element partition
    assert "memref.reinterpret_cast" in str(info.value) and "free elements [49, 65)" in str(info.value)


@pytest.mark.parametrize("which", [0, 6])
def test_sbuf_free_dim_runtime_select(which):
    x = _rand((128, 8, 64))
    _same(K.sbuf_select_free_runtime(x, np.array([[which]], np.int32)), x[:, which])


def test_write_through_hbm_view():
    x = _rand((128, 64))
    _same(K.hbm_write_through_view(x), x.T)


# ------------------------------------------------------------------- on-chip views


@pytest.mark.parametrize("dt", [np.float32, BF16])
def test_sbuf_permute_free_dims(dt):
    x = _rand((128, 8, 16), dt)
    _same(K.sbuf_permute_free(x), x.transpose(0, 2, 1))


@pytest.mark.parametrize("dt", [np.float32, BF16])
@pytest.mark.parametrize("f", [1, 7, 512])
def test_sbuf_broadcast_free_dim(dt, f):
    x, v = _rand((128, f), dt), _rand((128, 1), dt)
    ref = (x.astype(np.float32) + v.astype(np.float32))
    np.testing.assert_allclose(K.sbuf_broadcast_add(x, v), ref, rtol=1e-6)


@pytest.mark.parametrize("p", [1, 128])
def test_sbuf_reshape_then_permute(p):
    x = _rand((p, 64))
    _same(K.sbuf_reshape_permute(x), x.reshape(p, 8, 8).transpose(0, 2, 1))


def test_sbuf_ap_strided():
    x = _rand((128, 64))
    _same(K.sbuf_ap_odd(x), x[:, 1::2])


def test_sbuf_ap_ignores_the_view_and_offsets_partitions():
    x = _rand((128, 64))
    _same(K.sbuf_ap_partitions(x), x[64:96, 8:24])


def test_write_through_sbuf_view():
    x = _rand((128, 32))
    ref = np.zeros((128, 64), np.float32)
    ref[:, 0::2] = x
    _same(K.sbuf_write_through_view(x), ref)


@pytest.mark.parametrize("src,dst", [(np.float32, "int32"), (np.int32, "bfloat16"),
                                     (BF16, "float32"), (np.float32, "uint8")])
def test_view_dtype(src, dst):
    x = (RNG.integers(-1000, 1000, (128, 64)).astype(src) if src == np.int32 else _rand((128, 64), src))
    got = K.bitcast(x, dst)
    want = x.view({"int32": np.int32, "bfloat16": BF16, "float32": np.float32, "uint8": np.uint8}[dst])
    _same(got, want)


def test_view_dtype_of_a_strided_hbm_view():
    x = RNG.integers(-2 ** 31, 2 ** 31, (128, 64)).astype(np.int32)
    _same(K.hbm_bitcast_slice(x), np.ascontiguousarray(x[:, 8:24]).view(BF16))


def test_ap_with_dtype_reinterprets_storage():
    x = RNG.integers(-2 ** 31, 2 ** 31, (128, 64)).astype(np.int32)
    _same(K.sbuf_ap_dtype(x), x.view(BF16))


def test_pattern_queries_at_compile_time():
    x = _rand((128, 128))
    _same(K.queries(x), x)


# ------------------------------------------------------------------------ errors


def _line_of(text: str) -> int:
    for i, line in enumerate(open(FILE).read().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(text)


ERRORS = [
    # case, message fragment, source fragment of the reported line
    ("dim_range", "tensor.select: dim 5 is out of range", "v = t.select(5, 0)"),
    ("permute_partition", "dims[0] must be 0", ".permute((1, 0, 2))"),
    ("permute_not_perm", "not a permutation", "x.permute((0, 0))"),
    ("broadcast_partition", "tensor.broadcast: cannot broadcast dim 0", "c.broadcast(0, 4)"),
    ("broadcast_size", "has size 64; only a size-1 dim can be broadcast", "t.broadcast(1, 4)"),
    ("expand_partition", "tensor.expand_dim: cannot insert a dim before dim 0", "t.expand_dim(0)"),
    ("squeeze_partition", "tensor.squeeze_dim: cannot squeeze dim 0", "squeeze_dim(0)"),
    ("squeeze_size", "only a size-1 dim can be squeezed", "t.squeeze_dim(1)"),
    ("squeeze_rank", "needs at least 2 dims", "c.squeeze_dim(1)"),
    ("too_many_dims", "more than the 5 an NkiTensor view allows", "(2, 2, 2, 2, 2, 256)"),
    ("reshape_count", "has 8320 elements but the tensor has 8192", "x.reshape((128, 65))"),
    ("reshape_partition", "cannot change the partition dim", "t.reshape((64, 128))"),
    ("reshape_noncontig", "is not contiguous enough", ".reshape((8192,))"),
    ("reshape_dim_partition", "cannot reshape dim 0", "t.reshape_dim(0, (2, 64))"),
    ("flatten_partition", "start dim must be > 0", "t.flatten_dims(0, 1)"),
    ("flatten_noncontig", "are not contiguous", "permute((0, 2, 1)).flatten_dims(1, 2)"),
    ("slice_bounds", "needs 0 <= start < end <= 64", "x.slice(1, 0, 65)"),
    ("slice_partition_step", "no partition striding", "t.slice(0, 0, 128, 2)"),
    ("select_bounds", "index 128 is out of bounds for dim 0", "x.select(0, 128)"),
    ("select_dynamic_partition", "dynamic selection on dim 0", "t.select(0, i)"),
    ("rearrange_axes", "must name the same axes", "\"p a c\""),
    ("rearrange_partition", "must stay the first (partition) axis", "\"a p b\""),
    ("rearrange_sizes", "sizes must be a dict of axis name -> size, got 4", "\"p b a\", 4)"),
    ("view_noncontig", "has stride 2; a dtype view needs it contiguous", "x.slice(1, 0, 64, 2).view(nl.bfloat16)"),
    ("view_size", "is not a whole number of 4-byte elements", "[:, 0:5].view(nl.float32)"),
    ("ap_partition_step", "pattern[0] must be [64, nparts]", "t.ap([[128, 64], [1, 64]])"),
    ("ap_bounds", "covers elements [1, 8193) but the storage [128, 64] has 8192 (the view made at",
     "nisa.dma_copy(dst=t, src=v)  # the out-of-storage view used"),
    ("ap_vector_onchip", "vector_offset needs an HBM tensor", "t.ap([[64, 128], [1, 64]], vector_offset=ix)"),
    ("ap_vector_dim", "vector_offset supports only indirect_dim=0", "indirect_dim=1)"),
    ("ap_index_dtype", "'vector_offset' must be int32 or uint32, got float32", "vector_offset=fx)"),
    ("ap_both_offsets", "at most one of scalar_offset and vector_offset", "scalar_offset=1, vector_offset"),
    ("vector_select_onchip", "tensor.vector_select: dynamic selection on dim 0", "t.vector_select(0, ix)"),
    ("indirect_twice", "an indirect dimension cannot be sliced", ".slice(1, 0, 8)"),
    ("indirect_compute", "nisa.tensor_copy: 'src' is an indirect view", "nisa.tensor_copy(dst=t, src=x.vector"),
    ("indirect_rows", "dst has 64 rows but the indirect src selects 128", "dst=t[0:64, :]"),
]


@pytest.mark.parametrize("case,fragment,source", ERRORS, ids=[e[0] for e in ERRORS])
def test_view_error_is_located(case, fragment, source):
    x = np.zeros((128, 64), np.float32)
    with pytest.raises(NKIError) as info:
        K.bad_view(x, case)
    err = info.value
    assert isinstance(err, NKITypeError), type(err)
    assert fragment in str(err), str(err)
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    assert err.loc.line == _line_of(source), str(err)
    assert source in str(err).splitlines()[-2]


# ------------------------------------------------------- no-copy reshape rule vs NumPy


def _factorizations():
    rng = np.random.default_rng(3)
    for _ in range(300):
        shape = tuple(int(x) for x in rng.choice([1, 2, 3, 4, 6], size=rng.integers(1, 4)))
        perm = rng.permutation(len(shape))
        n = int(np.prod(shape))
        new = []
        rest = n
        while rest > 1:
            d = int(rng.choice([k for k in range(1, rest + 1) if rest % k == 0]))
            new.append(d)
            rest //= d
        new += [1] * int(rng.integers(0, 2))
        yield shape, tuple(perm), tuple(new or [1])


def test_restride_matches_numpy_no_copy_reshape():
    from nki_mlir.frontend.view_layout import restride
    checked = 0
    for shape, perm, new in _factorizations():
        a = np.zeros(shape, np.float32).transpose(perm)
        strides = [s // 4 for s in a.strides]
        mine = restride(a.shape, strides, new)
        try:
            b = np.reshape(a, new, copy=False)
        except ValueError:
            assert mine is None, (shape, perm, new)
            continue
        assert mine is not None, (shape, perm, new)
        for n, s_np, s_mine in zip(new, b.strides, mine):
            if n != 1:
                assert s_np // 4 == s_mine, (shape, perm, new)
        checked += 1
    assert checked > 50
