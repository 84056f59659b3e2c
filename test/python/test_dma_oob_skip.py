"""``nisa.dma_copy(..., oob_mode=skip)`` with a dynamic address (``.ap(scalar_offset=t)``, ``t``
a ``(1, 1)`` int tile): an out-of-bounds address skips the whole transfer; with the default
``oob_mode=error`` it is a located runtime error.  NKI docs ``nki.isa.dma_copy``: "In both of
these dynamic modes, out-of-bound address checking is turned on automatically ... make the
``nisa.dma_copy`` instruction skip the DMA transfer for a given dynamic address or index when
it is out of bound using ``oob_mode=oob_mode.skip``".  Found running nki-library's
blockwise MoE matmul, which loads the weights of expert ``E`` (a padding block) with skip."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIHazardError, NKIRuntimeError

X = np.arange(8 * 4 * 16, dtype=np.float32).reshape(8, 4, 16)


@nki.jit
def load_block(x, which, skip):
    """out = block which[0, 0] of x [8, 4, 16], or 7.0 everywhere when the load is skipped."""
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=which)
    t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=7.0)
    nisa.dma_copy(dst=t, src=x.ap([[16, 4], [1, 16]], offset=0, scalar_offset=idx, indirect_dim=0),
                  oob_mode=nisa.oob_mode.skip if skip else nisa.oob_mode.error)
    out = nl.ndarray((4, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def store_block(x, which):
    """out [8, 4, 16] = x, then block which[0, 0] of out = 1.0 (skipped when out of bounds)."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(8):
        t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[b])
        nisa.dma_copy(dst=out[b], src=t)
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=which)
    ones = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    nisa.dma_copy(dst=out.ap([[16, 4], [1, 16]], offset=0, scalar_offset=idx, indirect_dim=0),
                  src=ones, oob_mode=nisa.oob_mode.skip)
    return out


def _which(i):
    return np.array([[i]], np.int32)


@pytest.mark.parametrize("hazards", [False, True])
def test_an_in_bounds_dynamic_load_copies_and_an_out_of_bounds_one_is_skipped(hazards):
    k = nki.compile(load_block, X, _which(3), True)
    (got,) = k.run((X, _which(3)), {}, hazards=hazards)
    np.testing.assert_array_equal(got, X[3])
    for i in (8, 100, -1):
        (got,) = k.run((X, _which(i)), {}, hazards=hazards)
        np.testing.assert_array_equal(got, np.full((4, 16), 7.0, np.float32))


def test_an_out_of_bounds_dynamic_load_is_a_located_error_by_default():
    with pytest.raises(NKIRuntimeError, match=r"test_dma_oob_skip\.py:\d+:\d+: .*out-of-bounds "
                                              r"access of 'source'"):
        load_block(X, _which(8), False)


@pytest.mark.parametrize("hazards", [False, True])
def test_an_out_of_bounds_dynamic_store_is_skipped(hazards):
    k = nki.compile(store_block, X, _which(2))
    (got,) = k.run((X, _which(2)), {}, hazards=hazards)
    want = X.copy()
    want[2] = 1.0
    np.testing.assert_array_equal(got, want)
    (got,) = k.run((X, _which(8)), {}, hazards=hazards)
    np.testing.assert_array_equal(got, X)


@nki.jit
def load_unset(x, which):
    """out = block which[0, 0] of x [8, 4, 16]; nothing else writes ``t``, so a skipped load
    leaves ``t`` never written and the store reads it."""
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=which)
    t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap([[16, 4], [1, 16]], offset=0, scalar_offset=idx, indirect_dim=0),
                  oob_mode=nisa.oob_mode.skip)
    out = nl.ndarray((4, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_a_skipped_load_leaves_its_dst_unwritten_for_the_hazard_checks():
    """With hazard checks, a skipped transfer writes nothing: the later read of its ``dst`` is
    a read of never-written bytes, located at that read (an in-bounds address is clean)."""
    k = nki.compile(load_unset, X, _which(3))
    (got,) = k.run((X, _which(3)), {}, hazards=True)
    np.testing.assert_array_equal(got, X[3])
    with pytest.raises(NKIHazardError, match=r"test_dma_oob_skip\.py:\d+:\d+: hazard: "
                                             r"nisa\.dma_copy: 'src' reads SBUF/PSUM bytes "
                                             r"never written"):
        k.run((X, _which(8)), {}, hazards=True)
