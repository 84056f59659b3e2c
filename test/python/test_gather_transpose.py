"""Indirect ``nisa.dma_transpose`` (gather-transpose): ``src = hbm.ap(pattern,
vector_offset=idx, indirect_dim=0)``; nki.isa API reference, ``dma_transpose`` ("DMA
Indirect Transpose Constraints": ``gathered = src[indices[:, 0], ...]``, ``dst =
gathered.T``), checked bit-exactly against NumPy fancy indexing + transpose."""
import inspect

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKITypeError

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(77)


@nki.jit
def k_gather_t2(table, idx):
    """2-D: rows idx[i] of table [V, F] -> dst [F, P]."""
    p, f = idx.shape[0], table.shape[1]
    idx_sb = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx_sb, src=idx)
    dst = nl.ndarray((f, p), table.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=dst, src=table.ap([[f, p], [1, f]], vector_offset=idx_sb,  # MARK2
                                            indirect_dim=0))
    out = nl.ndarray((f, p), table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=dst)
    return out


@nki.jit
def k_gather_t4(cache, idx, dge):
    """4-D, the paged-KV form: blocks idx[i] of cache [NB, BL, D] -> dst [D, 1, BL, P]."""
    nb, bl, d = cache.shape
    p = idx.shape[0]
    idx_sb = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx_sb, src=idx)
    c4 = cache.reshape((nb, 1, bl, d))
    dst = nl.ndarray((d, 1, bl, p), cache.dtype, buffer=nl.sbuf)
    src = c4.ap([[bl * d, p], [1, 1], [d, bl], [1, d]], offset=0, vector_offset=idx_sb,
                indirect_dim=0)
    if dge:
        nisa.dma_transpose(dst=dst, src=src, axes=(3, 1, 2, 0), dge_mode=nisa.dge_mode.swdge)
    else:
        nisa.dma_transpose(dst=dst, src=src, axes=(3, 1, 2, 0))  # MARK4
    out = nl.ndarray((d, 1, bl, p), cache.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=dst)
    return out


@nki.jit
def k_gather_t_skip(table, idx):
    p, f = idx.shape[0], table.shape[1]
    idx_sb = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx_sb, src=idx)
    dst = nl.ndarray((f, p), table.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=dst, src=table.ap([[f, p], [1, f]], vector_offset=idx_sb,  # MARK-SKIP
                                            indirect_dim=0),
                       oob_mode=nisa.oob_mode.skip)
    out = nl.ndarray((f, p), table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=dst)
    return out


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint16)


@pytest.mark.parametrize("dt", [BF16, np.float16, np.int16])
@pytest.mark.parametrize("p,v,f", [(128, 300, 64), (16, 16, 128), (64, 1000, 1)])
def test_gather_transpose_2d(dt, p, v, f):
    table = (RNG.standard_normal((v, f)) * 8).astype(np.float32).astype(dt)
    idx = RNG.integers(0, v, (p, 1)).astype(np.uint32)
    got = nki.compile(k_gather_t2, table, idx, target="trn2")(table, idx)
    ref = table[idx[:, 0].astype(np.int64)].T
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert np.array_equal(_bits(got), _bits(ref))


@pytest.mark.parametrize("dge", [False, True])
def test_gather_transpose_4d_blocks(dge):
    nb, bl, d, p = 200, 8, 64, 128
    cache = RNG.standard_normal((nb, bl, d)).astype(BF16)
    idx = RNG.permutation(nb)[:p].astype(np.int32).reshape(p, 1)
    got = nki.compile(k_gather_t4, cache, idx, dge, target="trn2")(cache, idx, dge)
    gathered = cache[idx[:, 0]].reshape(p, 1, bl, d)
    ref = np.transpose(gathered, (3, 1, 2, 0))
    assert got.shape == ref.shape
    assert np.array_equal(_bits(got), _bits(ref))


def _line(kernel, marker):
    lines, start = inspect.getsourcelines(kernel.fn)
    return start + next(i for i, t in enumerate(lines) if marker in t)


def _located(kernel, marker, fragments, *args, target="trn2"):
    with pytest.raises(NKITypeError) as info:
        nki.compile(kernel, *args, target=target)(*args)
    for frag in fragments:
        assert frag in str(info.value), str(info.value)
    assert info.value.loc is not None and info.value.loc.line == _line(kernel, marker)


def test_gather_transpose_errors():
    idx = np.zeros((128, 1), np.uint32)
    _located(k_gather_t2, "MARK2", ["indirect 'src'", "2-byte dtype", "float32"],
             np.zeros((200, 64), np.float32), idx)
    _located(k_gather_t2, "MARK2", ["needs trn2", "trn1"], np.zeros((200, 64), BF16), idx,
             target="trn1")
    _located(k_gather_t2, "MARK2", ["src.shape[0] must be divisible by 16, got 8"],
             np.zeros((200, 64), BF16), np.zeros((8, 1), np.uint32))
    _located(k_gather_t_skip, "MARK-SKIP", ["oob_mode=skip is not supported"],
             np.zeros((200, 64), BF16), idx)
