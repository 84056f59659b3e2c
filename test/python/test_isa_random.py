"""nisa random-number instructions (rng, set_rng_seed, rand_set_state, rand_get_state, rand2,
dropout): an independent pure-Python XORWOW reference (Marsaglia 2003), determinism, seed
sensitivity, statistics, state round trips, dtype truncation and the documented errors
(nki_spec.md section 5.4)."""
import inspect

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIRuntimeError, NKIVerifyError

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
U32 = np.dtype(np.uint32)
M32 = 0xFFFFFFFF


def _line_of(kernel, marker: str) -> int:
    lines, start = inspect.getsourcelines(kernel.fn)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(marker)


def _raises(cls, kernel, marker, fragments, *args, target=None):
    with pytest.raises(cls) as info:
        if target:
            nki.compile(kernel, *args, target=target)(*args)
        else:
            kernel(*args)
    err = info.value
    for f in fragments:
        assert f in str(err), str(err)
    assert err.loc is not None and err.loc.line == _line_of(kernel, marker), (err.loc, str(err))
    return err


def _run(kernel, *args, target="trn2"):
    return nki.compile(kernel, *args, target=target)(*args)


def xorwow_ref(state, n):
    """Marsaglia's xorwow: ``n`` outputs of one 6-word state [x, y, z, w, v, d]; returns
    (outputs, final state)."""
    x, y, z, w, v, d = (int(s) for s in state)
    out = []
    for _ in range(n):
        t = x ^ (x >> 2)
        x, y, z, w = y, z, w, v
        v = (v ^ ((v << 4) & M32)) ^ (t ^ ((t << 1) & M32))
        d = (d + 362437) & M32
        out.append((v + d) & M32)
    return out, [x, y, z, w, v, d]


# ======================================================================== kernels


@nki.jit
def k_rng(shape, dtype, engine, seed):
    """rng into ``dtype``; ``seed`` (a [1, 1] uint32 HBM tensor) seeds the Vector PRNG first."""
    out = nl.ndarray(shape, dtype, buffer=nl.shared_hbm)
    s = nl.ndarray((1, 1), nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=seed)
    nisa.set_rng_seed(src_seeds=s)  # MARK-SEED
    t = nl.ndarray(shape, dtype, buffer=nl.sbuf)
    nisa.rng(dst=t, engine=engine)  # MARK-RNG
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def k_rng_unseeded(x):
    out = nl.ndarray(x.shape, nl.uint32, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, nl.uint32, buffer=nl.sbuf)
    nisa.rng(dst=t)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def k_rng_two_dtypes(seed, shape, dtype):
    """The same seeded stream read as uint32 and as ``dtype``."""
    wide = nl.ndarray(shape, nl.uint32, buffer=nl.shared_hbm)
    narrow = nl.ndarray(shape, dtype, buffer=nl.shared_hbm)
    s = nl.ndarray((1, 1), nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=seed)
    a = nl.ndarray(shape, nl.uint32, buffer=nl.sbuf)
    b = nl.ndarray(shape, dtype, buffer=nl.sbuf)
    nisa.set_rng_seed(src_seeds=s)
    nisa.rng(dst=a)
    nisa.set_rng_seed(src_seeds=s)
    nisa.rng(dst=b)
    nisa.dma_copy(dst=wide, src=a)
    nisa.dma_copy(dst=narrow, src=b)
    return wide, narrow


@nki.jit
def k_state(states, shape, engine, dtype):
    """rand_set_state(states); rng(shape) on ``engine``; rand_get_state -> (random, final state)."""
    r_out = nl.ndarray(shape, dtype, buffer=nl.shared_hbm)
    s_out = nl.ndarray(states.shape, nl.uint32, buffer=nl.shared_hbm)
    s = nl.ndarray(states.shape, nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=states)
    nisa.rand_set_state(src_seeds=s, engine=engine)  # MARK-SET
    r = nl.ndarray(shape, dtype, buffer=nl.sbuf)
    nisa.rng(dst=r, engine=engine)
    g = nl.ndarray(states.shape, nl.uint32, buffer=nl.sbuf)
    nisa.rand_get_state(dst=g, engine=engine)  # MARK-GET
    nisa.dma_copy(dst=r_out, src=r)
    nisa.dma_copy(dst=s_out, src=g)
    return r_out, s_out


@nki.jit
def k_get_set_roundtrip(states, engine):
    out = nl.ndarray(states.shape, states.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray(states.shape, states.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=states)
    nisa.rand_set_state(src_seeds=s, engine=engine)  # MARK-RT
    g = nl.ndarray(states.shape, states.dtype, buffer=nl.sbuf)
    nisa.rand_get_state(dst=g, engine=engine)
    nisa.dma_copy(dst=out, src=g)
    return out


@nki.jit
def k_dropout(x, prob, seed):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray((1, 1), nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=seed)
    nisa.set_rng_seed(src_seeds=s)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    d = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dropout(dst=d, data=t, prob=prob)  # MARK
    nisa.dma_copy(dst=out, src=d)
    return out


@nki.jit
def k_dropout_tile(x, probs):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    p = nl.ndarray(probs.shape, probs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=p, src=probs)
    d = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dropout(dst=d, data=t, prob=p)  # MARK
    nisa.dma_copy(dst=out, src=d)
    return out


@nki.jit
def k_rand2(shape, dtype, lo, hi):
    out = nl.ndarray(shape, dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(shape, dtype, buffer=nl.sbuf)
    nisa.rand2(dst=t, min=lo, max=hi)  # MARK
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def k_rand2_tiles(shape, lo, hi):
    out = nl.ndarray(shape, nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray(lo.shape, nl.float32, buffer=nl.sbuf)
    b = nl.ndarray(hi.shape, nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lo)
    nisa.dma_copy(dst=b, src=hi)
    t = nl.ndarray(shape, nl.float32, buffer=nl.sbuf)
    nisa.rand2(dst=t, min=a, max=b)  # MARK
    nisa.dma_copy(dst=out, src=t)
    return out


def _seed(v):
    return np.array([[v]], np.uint32)


# ============================================================================ rng


@pytest.mark.parametrize("shape", [(1, 1), (128, 1), (1, 512), (128, 512), (3, 4, 5)])
def test_rng_deterministic_and_seed_sensitive(shape):
    a = k_rng(shape, U32, None, _seed(7))
    b = k_rng(shape, U32, None, _seed(7))
    c = k_rng(shape, U32, None, _seed(8))
    assert a.dtype == np.uint32 and a.shape == shape
    assert np.array_equal(a, b)
    if a.size >= 4:
        assert np.mean(a != c) > 0.9
        assert len(np.unique(a)) > 0.9 * a.size


def test_rng_unseeded_uses_a_fixed_default_seed():
    x = np.zeros((128, 64), np.uint32)
    a, b = k_rng_unseeded(x), k_rng_unseeded(x)
    assert np.array_equal(a, b)
    assert len({tuple(r) for r in a}) == 128  # every lane has its own stream


@pytest.mark.parametrize("engine", [None, nisa.engine.vector, nisa.engine.gpsimd])
def test_rng_uniform_statistics(engine):
    bits = k_rng((128, 512), U32, engine, _seed(12345)).astype(np.float64)
    u = bits / 2.0 ** 32
    assert abs(u.mean() - 0.5) < 0.01  # sd of the mean ~ 0.0011
    assert abs(u.var() - 1 / 12) < 0.005
    hist = np.histogram(u, bins=16, range=(0, 1))[0] / u.size
    assert np.all(np.abs(hist - 1 / 16) < 0.01)
    for bit in (0, 1, 15, 31):  # every bit is a fair coin
        assert abs(((bits.astype(np.uint64) >> bit) & 1).mean() - 0.5) < 0.01


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
@pytest.mark.parametrize("shape", [(1, 1), (128, 257)])
def test_rng_truncates_to_the_low_bits(dtype, shape):
    wide, narrow = k_rng_two_dtypes(_seed(99), shape, np.dtype(dtype))
    assert narrow.dtype == dtype
    bits = np.dtype(dtype).itemsize * 8
    low = (wide.astype(np.uint64) & ((1 << bits) - 1)).astype(np.dtype(dtype).str.replace("i", "u"))
    assert np.array_equal(narrow.view(low.dtype), low)


def test_rng_matches_marsaglia_xorwow_on_gpsimd():
    rng = np.random.default_rng(5)
    states = rng.integers(0, 2 ** 32, size=(7, 6), dtype=np.uint64).astype(np.uint32)
    r, final = _run(k_state, states, (7, 3, 5), nisa.engine.gpsimd, U32, target="trn2")
    for p in range(7):
        outs, st = xorwow_ref(states[p], 15)
        assert list(r[p].reshape(-1)) == outs  # row-major order of the free dims
        assert list(final[p]) == st


def test_rng_matches_xorwow_on_trn3_vector_with_four_states_per_lane():
    rng = np.random.default_rng(6)
    states = rng.integers(0, 2 ** 32, size=(128, 24), dtype=np.uint64).astype(np.uint32)
    r, final = _run(k_state, states, (128, 10), nisa.engine.vector, U32, target="trn3")
    for p in (0, 1, 77, 127):
        for k in range(4):  # element j of a lane comes from state j % 4
            outs, st = xorwow_ref(states[p, 6 * k:6 * k + 6], 3)
            assert list(r[p, k::4]) == outs[:len(r[p, k::4])]
            n_used = len(r[p, k::4])
            assert list(final[p, 6 * k:6 * k + 6]) == xorwow_ref(states[p, 6 * k:6 * k + 6], n_used)[1]


@pytest.mark.parametrize("engine,words,target", [(nisa.engine.gpsimd, 6, "trn2"), (nisa.engine.gpsimd, 6, "trn3"),
                                                 (nisa.engine.vector, 24, "trn3"), (None, 6, "trn2")])
@pytest.mark.parametrize("parts", [1, 128])
def test_rand_state_round_trip(engine, words, target, parts):
    states = np.random.default_rng(parts).integers(0, 2 ** 32, size=(parts, words),
                                                   dtype=np.uint64).astype(np.uint32)
    assert np.array_equal(_run(k_get_set_roundtrip, states, engine, target=target), states)


def test_rand_state_sets_the_stream():
    states = np.random.default_rng(3).integers(0, 2 ** 32, size=(128, 6), dtype=np.uint64).astype(np.uint32)
    r1, _ = _run(k_state, states, (128, 64), nisa.engine.gpsimd, np.dtype(np.int16))
    r2, _ = _run(k_state, states, (128, 64), nisa.engine.gpsimd, np.dtype(np.int16))
    other = states.copy()
    other[5, 0] ^= 1
    r3, _ = _run(k_state, other, (128, 64), nisa.engine.gpsimd, np.dtype(np.int16))
    assert np.array_equal(r1, r2)
    assert np.array_equal(np.delete(r1, 5, axis=0), np.delete(r3, 5, axis=0))  # lanes independent
    assert not np.array_equal(r1[5], r3[5])


# ======================================================================== dropout


@pytest.mark.parametrize("dtype", [F32, BF16])
@pytest.mark.parametrize("prob", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_dropout_rate(dtype, prob):
    x = (np.random.default_rng(0).random((128, 512)) + 1.0).astype(dtype)  # never 0
    y = k_dropout(x, prob, _seed(2024))
    assert y.dtype == dtype
    kept = y != 0
    assert np.array_equal(y[kept], x[kept])  # kept values are not rescaled
    rate = 1.0 - kept.mean()
    if prob in (0.0, 1.0):
        assert rate == prob
    else:
        assert abs(rate - prob) < 0.01  # sd ~ 0.002 over 65536 samples
    assert np.array_equal(y, k_dropout(x, prob, _seed(2024)))  # deterministic given the seed
    if 0 < prob < 1:
        assert not np.array_equal(y, k_dropout(x, prob, _seed(2025)))


@pytest.mark.parametrize("shape", [(1, 1), (128, 1), (1, 4096), (5, 3, 7)])
def test_dropout_edge_shapes(shape):
    x = np.ones(shape, np.float32)
    assert np.array_equal(k_dropout(x, 0.0, _seed(1)), x)
    assert np.array_equal(k_dropout(x, 1.0, _seed(1)), np.zeros(shape, np.float32))
    y = k_dropout(x, 0.5, _seed(1))
    assert set(np.unique(y)) <= {0.0, 1.0}


def test_dropout_per_partition_prob_and_int_data():
    probs = np.linspace(0.0, 1.0, 128, dtype=np.float32).reshape(128, 1)
    x = np.full((128, 2048), 3, np.int32)
    y = k_dropout_tile(x, probs)
    rate = (y == 0).mean(axis=1)
    assert rate[0] == 0.0 and rate[-1] == 1.0
    assert np.all(np.abs(rate - probs[:, 0]) < 0.05)  # sd <= 0.011 per partition
    assert set(np.unique(y)) <= {0, 3}
    xb = np.full((128, 2048), 2.0, BF16)
    yb = k_dropout_tile(xb, probs.astype(BF16))  # float data: any float prob dtype
    assert np.all(np.abs((yb == 0).mean(axis=1) - probs[:, 0]) < 0.05)


# =========================================================================== rand2


@pytest.mark.parametrize("dtype", [F32, BF16])
@pytest.mark.parametrize("shape", [(1, 1), (128, 1), (128, 512)])
def test_rand2_uniform_range(dtype, shape):
    y = _run(k_rand2, shape, dtype, -2.0, 6.0, target="trn3").astype(np.float64)
    assert np.all((y >= -2.0) & (y <= 6.0))
    if y.size > 1000:
        assert abs(y.mean() - 2.0) < 0.05  # sd of the mean ~ 0.009
        assert abs(y.var() - 64 / 12) < 0.15
    assert np.array_equal(y, _run(k_rand2, shape, dtype, -2.0, 6.0, target="trn3"))


def test_rand2_per_partition_bounds_and_int_dst():
    lo = np.arange(128, dtype=np.float32).reshape(128, 1)
    hi = lo + 0.5
    y = _run(k_rand2_tiles, (128, 256), lo, hi, target="trn3")
    assert np.all((y >= lo) & (y <= hi))
    assert np.all(np.abs(y.mean(axis=1) - (lo[:, 0] + 0.25)) < 0.05)
    yi = _run(k_rand2, (128, 512), np.dtype(np.int32), 0.0, 10.0, target="trn3")
    assert yi.dtype == np.int32 and yi.min() >= 0 and yi.max() <= 10 and len(np.unique(yi)) >= 9


# ========================================================================== errors


@nki.jit
def k_rng_psum_gpsimd(x):
    t = nl.ndarray(x.shape, nl.uint32, buffer=nl.psum)
    nisa.rng(dst=t, engine=nisa.engine.gpsimd)  # MARK
    return x


@nki.jit
def k_seed_bad(seeds):
    s = nl.ndarray(seeds.shape, seeds.dtype, buffer=nl.sbuf)
    nisa.set_rng_seed(src_seeds=s)  # MARK
    return seeds


@nki.jit
def k_dropout_bad_dst(x):
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    d = nl.ndarray(x.shape, nl.bfloat16, buffer=nl.sbuf)
    nisa.dropout(dst=d, data=t, prob=0.5)  # MARK
    return x


def test_rng_errors():
    s = _seed(1)
    _raises(NKIVerifyError, k_rng, "MARK-RNG", ["nisa.rng: 'dst' dtype float32 is not supported",
                                              "allowed: int8, int16, int32, uint8, uint16, uint32"],
            (4, 4), F32, None, s)
    _raises(NKIVerifyError, k_rng, "MARK-RNG", ["nisa.rng: cannot run on the gpsimd engine on trn1", "allowed: vector"],
            (4, 4), U32, nisa.engine.gpsimd, s, target="trn1")
    _raises(NKIVerifyError, k_rng, "MARK-RNG", ["nisa.rng: cannot run on the scalar engine"],
            (4, 4), U32, nisa.engine.scalar, s)
    _raises(NKIVerifyError, k_rng_psum_gpsimd, "MARK", ["nisa.rng: operand 'dst' is in psum", "GpSimd engine", "cannot access PSUM"],
            np.zeros((4, 4), np.float32))
    _raises(NKIVerifyError, k_seed_bad, "MARK", ["nisa.set_rng_seed: 'src_seeds' must be a [1, 1] tensor"],
            np.zeros((1, 2), np.uint32))
    _raises(NKIVerifyError, k_seed_bad, "MARK", ["nisa.set_rng_seed: 'src_seeds' dtype int16 is not supported",
                                               "allowed: float32, int32, uint32"],
            np.zeros((1, 1), np.int16))


def test_rand_state_errors():
    st6 = np.zeros((4, 6), np.uint32)
    _raises(NKIVerifyError, k_state, "MARK-SET", ["nisa.rand_set_state: nisa.rand_set_state needs trn2",
                                                  "target is trn1"],
            st6, (4, 4), nisa.engine.gpsimd, U32, target="trn1")
    _raises(NKIVerifyError, k_state, "MARK-SET", ["nisa.rand_set_state: cannot run on the vector engine on trn2",
                                                  "vector needs trn3"],
            st6, (4, 4), nisa.engine.vector, U32, target="trn2")
    _raises(NKIVerifyError, k_state, "MARK-SET", ["nisa.rand_set_state: 'src_seeds' must hold 24 uint32 XORWOW state "
                                                  "words per partition on the vector engine"],
            st6, (4, 4), nisa.engine.vector, U32, target="trn3")
    _raises(NKIVerifyError, k_get_set_roundtrip, "MARK-RT", ["nisa.rand_set_state: 'src_seeds' dtype int32 is not supported (allowed: uint32)"],
            np.zeros((4, 6), np.int32), nisa.engine.gpsimd, target="trn2")


def test_dropout_and_rand2_errors():
    x = np.ones((4, 8), np.float32)
    _raises(NKIVerifyError, k_dropout_bad_dst, "MARK",
            ["nisa.dropout: 'dst' dtype bfloat16 must match 'data' dtype float32"], x)
    _raises(NKIVerifyError, k_dropout_tile, "MARK",
            ["nisa.dropout: 'prob' must be float32 when 'data' is an integer tensor, got bfloat16"],
            np.ones((4, 8), np.int32), np.zeros((4, 1), BF16))
    _raises(NKIVerifyError, k_dropout_tile, "MARK", ["nisa.dropout: 'prob' must be a float tensor, got int32"],
            x, np.zeros((4, 1), np.int32))
    _raises(NKIVerifyError, k_dropout_tile, "MARK",
            ["nisa.dropout: operand 'prob' must be a scalar or a [4, 1] per-partition tensor"],
            x, np.zeros((4, 2), np.float32))
    _raises(NKIVerifyError, k_rand2, "MARK", ["nisa.rand2: nisa.rand2 needs trn3", "target is trn2"],
            (4, 4), F32, 0.0, 1.0, target="trn2")
    _raises(NKIRuntimeError, k_rand2, "MARK", ["nisa.rand2: 'min' must be less than 'max'"],
            (4, 4), F32, 1.0, 1.0, target="trn3")


@nki.jit
def k_get_state_psum(x, engine):
    g = nl.ndarray((4, 6), nl.uint32, buffer=nl.psum)
    nisa.rand_get_state(dst=g, engine=engine)  # MARK
    return x


def test_rand_get_state_psum_errors():
    x = np.zeros((4, 4), np.float32)
    _raises(NKIVerifyError, k_get_state_psum, "MARK",
            ["nisa.rand_get_state: operand 'dst' is in psum, but this instruction runs on the GpSimd "
             "engine, which cannot access PSUM", "or use engine=nisa.engine.vector"],
            x, nisa.engine.gpsimd, target="trn3")
    _raises(NKIVerifyError, k_get_state_psum, "MARK",
            ["nisa.rand_get_state: operand 'dst' is in psum, but this instruction runs on the GpSimd "
             "engine (its only engine on trn2), which cannot access PSUM (copy the data to SBUF first)"],
            x, None, target="trn2")
