"""``t.ap(...)`` on a view: the view's storage offset is the base of ``offset``, and
``indirect_dim`` names a dim of ``t.shape`` whose stride scales ``scalar_offset`` /
``vector_offset`` (nki.language ``NkiTensor.ap``: "offset: element offset added to the
view's base storage offset"; "indirect_dim: dimension in self.shape whose stride scales the
indirect scalar/vector offset").  Found running nki-library's TensorView, which calls
``base.reshape(...).ap(..., scalar_offset=idx, indirect_dim=k)``."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIError


@nki.jit
def rows_of_slice(x, start, offset):
    """x [8, 64] HBM: x[start:start+4, :].ap([[64, 4], [1, 64]], offset=offset)."""
    t = nl.ndarray((4, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[start:start + 4, :].ap([[64, 4], [1, 64]], offset=offset))
    out = nl.ndarray((4, 64), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def reshaped_scalar_offset(x, which, dim):
    """x [32, 16] HBM seen as [8, 4, 16]; a [4, 16] pattern from scalar_offset=which[0, 0]
    along dim ``dim`` of the reshaped view (stride 64 for dim 0, 16 for dim 1)."""
    v = x.reshape((8, 4, 16))
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=which)
    t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=v.ap([[16, 4], [1, 16]], offset=0, scalar_offset=idx, indirect_dim=dim))
    out = nl.ndarray((4, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def reshaped_static_offset(x):
    """x [32, 16] as [8, 4, 16]: block 2 (rows 8..11) through an int scalar_offset."""
    t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.reshape((8, 4, 16)).ap([[16, 4], [1, 16]], scalar_offset=2,
                                                     indirect_dim=0))
    out = nl.ndarray((4, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def reshaped_gather(x, idx):
    """x [32, 16] as [4, 8, 16]; row i of out is the first row of block idx[i, 0]."""
    ix = nl.ndarray((4, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    g = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=x.reshape((4, 8, 16)).ap([[128, 4], [1, 16]], vector_offset=ix))
    out = nl.ndarray((4, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=g)
    return out


@nki.jit
def bad_indirect_dim(x):
    t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap([[16, 4], [1, 16]], scalar_offset=1, indirect_dim=2))
    return x


@nki.jit
def last_tile_guarded(x, n_tiles):
    """Makes the ap view of tile i before testing i < 2 (as nki-library's output projection
    does for its last, partial PSUM tile): tiles 2.. are out of x's storage, never used."""
    out = nl.ndarray((2, 64), x.dtype, buffer=nl.shared_hbm)
    for i in range(n_tiles):
        v = x.ap([[64, 1], [1, 64]], offset=i * 64)
        if i < 2:
            t = nl.ndarray((1, 64), x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=v)
            nisa.dma_copy(dst=out[i:i + 1, :], src=t)
    return out


@nki.jit
def uses_out_of_storage(x):
    v = x.ap([[64, 1], [1, 64]], offset=2 * 64)
    t = nl.ndarray((1, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=v)  # USE
    return x


X8 = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
X32 = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)


@pytest.mark.parametrize("start,offset", [(2, None), (2, 0), (2, 64), (0, 128)])
def test_offset_adds_to_the_view_base(start, offset):
    first = start + (offset or 0) // 64
    np.testing.assert_array_equal(rows_of_slice(X8, start, offset), X8[first:first + 4])


@pytest.mark.parametrize("dim,which", [(0, 1), (0, 5), (1, 1), (1, 3)])
def test_scalar_offset_scales_by_the_view_stride(dim, which):
    got = reshaped_scalar_offset(X32, np.array([[which]], np.int32), dim)
    first = which * (64 if dim == 0 else 16) // 16
    np.testing.assert_array_equal(got, X32[first:first + 4])


def test_static_scalar_offset_on_a_reshape():
    np.testing.assert_array_equal(reshaped_static_offset(X32), X32[8:12])


def test_vector_offset_scales_by_the_view_stride():
    idx = np.array([[3], [0], [2], [1]], np.int32)
    np.testing.assert_array_equal(reshaped_gather(X32, idx), X32[idx[:, 0] * 8])


def test_indirect_dim_is_a_dim_of_the_view():
    with pytest.raises(NKIError, match="indirect_dim 2 is out of range"):
        bad_indirect_dim(X32)


def test_an_out_of_storage_view_is_an_error_only_when_used():
    x = X8[:2].copy()
    np.testing.assert_array_equal(last_tile_guarded(x, 4), x)
    with pytest.raises(NKIError, match=r"outside|covers elements .* is used here") as info:
        uses_out_of_storage(x)
    assert "# USE" in str(info.value) and "the view made at" in str(info.value)
    assert info.value.code == "err_tensor_access_out_of_bound"
