"""Closure builders for rng, set_rng_seed, rand_set_state, rand_get_state, rand2, dropout,
and the per-lane XORWOW generator they share.

The generator (NKI architecture guide (nki/guides/architecture): "Vector/GpSimd per-lane XORWOW states of 6 x u32")
is Marsaglia's xorwow (G. Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8(14), 2003): each
lane keeps five xorshift words ``x, y, z, w, v`` and a Weyl counter ``d``, stored in that
order as 6 uint32.  One step::

    t = x ^ (x >> 2); x, y, z, w = y, z, w, v
    v = (v ^ (v << 4)) ^ (t ^ (t << 1)); d += 362437
    output = v + d            (mod 2**32)

Per-run state lives in ``State.rng[engine]`` (:mod:`.program`) as a ``(128, words)`` uint32
array, one row per lane (partition): 6 words for GpSimd and for Vector on trn1/trn2; 24 on
trn3 Vector, which keeps 4 independent states per lane (row = state 0's 6 words, then state
1's, ...) and uses state ``j % 4`` for the ``j``-th element of a lane (each state advances once
per element it produces).  Lane ``p`` serves
partition ``p`` of the operand (counted from the operand's first partition); a lane draws its
elements in row-major order of the operand's free dims.

Seeding: an engine's state is created on first use from :data:`DEFAULT_SEED`;
``set_rng_seed(s)`` re-creates the Vector state from ``s``.  A 32-bit seed becomes state
words with the splitmix32 mixer over (seed, engine lane, state index, word index), so lanes
are decorrelated and the same seed always gives the same streams.  ``rand_set_state`` /
``rand_get_state`` copy raw state rows in and out.

Uses of the bits: ``rng`` keeps the low bits (``astype`` to the integer ``dst`` dtype);
``dropout`` keeps an element iff ``(bits >> 8) * 2**-24 >= prob`` (a uniform in [0, 1) with
24 bits, exact in fp32); ``rand2`` returns ``min + bits / (2**32 - 1) * (max - min)``
(fp32, so both ends are reachable), cast to ``dst``.

Semantics: nki.isa API reference (nki/api/nki/isa).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects.isa_random import XORWOW_WORDS, engine_of, state_words
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, Fault, finish
from .memory import PARTITIONS

if TYPE_CHECKING:
    from .decoder import Decoder

#: seed of an engine's PRNG before any set_rng_seed / rand_set_state in the run
DEFAULT_SEED = 0x2545F491
#: Marsaglia's Weyl-sequence increment
WEYL = np.uint32(362437)
_U32 = np.uint32


# ------------------------------------------------------------------ the generator


def _splitmix32(x: np.ndarray) -> np.ndarray:
    """The splitmix32 finaliser (a bijection on uint32), elementwise."""
    x = x.astype(np.uint32)
    x = x + _U32(0x9E3779B9)
    x = (x ^ (x >> _U32(16))) * _U32(0x85EBCA6B)
    x = (x ^ (x >> _U32(13))) * _U32(0xC2B2AE35)
    return x ^ (x >> _U32(16))


def seed_state(seed: int, words: int, lanes: int = PARTITIONS) -> np.ndarray:
    """A ``(lanes, words)`` uint32 XORWOW state derived from a 32-bit ``seed``."""
    with np.errstate(over="ignore"):
        idx = np.arange(lanes * words, dtype=np.uint32).reshape(lanes, words)
        s = _splitmix32(np.full((lanes, words), seed & 0xFFFFFFFF, np.uint32))
        st = _splitmix32(s ^ _splitmix32(idx))
    # a state whose five xorshift words are all zero would stay zero: nudge it
    v = st.reshape(lanes, -1, XORWOW_WORDS)
    dead = ~v[..., :5].any(axis=-1)
    v[..., 0][dead] = 1
    return st


def xorwow_step(st: np.ndarray) -> np.ndarray:
    """Advance every state of ``st`` (``(..., 6)`` uint32, in place) once; return the outputs."""
    x, v = st[..., 0], st[..., 4]
    t = x ^ (x >> _U32(2))
    nv = (v ^ (v << _U32(4))) ^ (t ^ (t << _U32(1)))
    st[..., 0:4] = st[..., 1:5]
    st[..., 4] = nv
    st[..., 5] += WEYL
    return nv + st[..., 5]


def draw(state: np.ndarray, parts: int, count: int) -> np.ndarray:
    """``(parts, count)`` uint32 random words from lanes ``0..parts-1`` of ``state`` (advanced).

    Same recurrence as :func:`xorwow_step`, with the six words unpacked so each step costs a
    few whole-lane NumPy operations."""
    nstates = state.shape[1] // XORWOW_WORDS
    st = state[:parts].reshape(parts, nstates, XORWOW_WORDS)
    steps, rem = divmod(count, nstates)
    out = np.empty((steps + (rem > 0), parts, nstates), np.uint32)
    x, y, z, w, v, d = (st[..., i].copy() for i in range(XORWOW_WORDS))
    two, one, four = _U32(2), _U32(1), _U32(4)
    with np.errstate(over="ignore"):
        for k in range(steps):
            t = x ^ (x >> two)
            t ^= t << one
            nv = v ^ (v << four)
            nv ^= t
            x, y, z, w, v = y, z, w, v, nv
            d += WEYL
            np.add(nv, d, out=out[k])
        for i, a in enumerate((x, y, z, w, v, d)):
            st[..., i] = a
        if rem:  # a last partial round: only the states that produce an element advance
            out[steps, :, :rem] = xorwow_step(st[:, :rem])
    return out.transpose(1, 0, 2).reshape(parts, -1)[:, :count]


def engine_state(env, engine: str, words: int) -> np.ndarray:
    """The run's ``(128, words)`` state of ``engine``, created from :data:`DEFAULT_SEED` if new."""
    rng = env[STATE].rng
    st = rng.get(engine)
    if st is None or st.shape[1] != words:
        st = rng[engine] = seed_state(DEFAULT_SEED, words)
    return st


# ------------------------------------------------------------------ closure builders


def _engine(dec: Decoder, op, default: str) -> tuple[str, int]:
    eng = engine_of(op, default)
    return eng, state_words(eng, dec.target)


def rng(dec: Decoder, op):
    dst = dec.buf(op, op.dst, "dst")
    eng, words = _engine(dec, op, "vector")
    d, parts, free, shape, dt = dst.slot, dst.parts, dst.free, dst.shape, dst.dtype

    def run(env):
        bits = draw(engine_state(env, eng, words), parts, free)
        env[d][...] = bits.astype(dt).reshape(shape)  # keeps the least significant bits
    return finish(op, run, dst)


def set_rng_seed(dec: Decoder, op):
    src = dec.buf(op, op.src_seeds, "src_seeds")
    if src.dtype.itemsize != 4 or src.parts != 1 or src.free != 1:
        raise error_at(op, f"{op.name}: 'src_seeds' must be a [1, 1] 32-bit tensor, got "
                           f"{list(src.shape)}", NKIRuntimeError)
    s, words = src.slot, state_words("vector", dec.target)

    def run(env):
        seed = int(np.ascontiguousarray(env[s]).reshape(-1).view(np.uint32)[0])
        env[STATE].rng["vector"] = seed_state(seed, words)
    return finish(op, run)


def _state_operand(dec: Decoder, op, role: str):
    b = dec.buf(op, getattr(op, role), role)
    eng, words = _engine(dec, op, "gpsimd")
    if b.free != words or b.dtype != np.uint32:
        raise error_at(op, f"{op.name}: '{role}' must be uint32 with {words} state words per "
                           f"partition on the {eng} engine, got {list(b.shape)}", NKIRuntimeError)
    return b, eng, words


def rand_set_state(dec: Decoder, op):
    src, eng, words = _state_operand(dec, op, "src_seeds")
    s, parts = src.slot, src.parts

    def run(env):
        engine_state(env, eng, words)[:parts] = env[s].reshape(parts, words)
    return finish(op, run)


def rand_get_state(dec: Decoder, op):
    dst, eng, words = _state_operand(dec, op, "dst")
    d, parts, shape = dst.slot, dst.parts, dst.shape

    def run(env):
        env[d][...] = engine_state(env, eng, words)[:parts].reshape(shape)
    return finish(op, run, dst)


def rand2(dec: Decoder, op):
    dst = dec.buf(op, op.dst, "dst")
    words = state_words("vector", dec.target)
    d, parts, free, shape = dst.slot, dst.parts, dst.free, dst.shape
    lo = dec.scalar(op, op.min, "min", (parts, free))
    hi = dec.scalar(op, op.max, "max", (parts, free))
    store = nm.make_store(dst.dtype)
    inv = np.float32(1.0 / 4294967295.0)

    def run(env):
        a, b = lo(env), hi(env)
        if np.any(np.asarray(a) >= np.asarray(b)):
            raise Fault(f"'min' must be less than 'max' (got min={np.min(a)}, max={np.max(b)})")
        bits = draw(engine_state(env, "vector", words), parts, free)
        u = bits.astype(np.float32) * inv
        store(env[d], (a + u * (b - a)).astype(np.float32).reshape(shape))
    return finish(op, run, dst)


def dropout(dec: Decoder, op):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    if dst.parts != data.parts or dst.free != data.free or dst.dtype != data.dtype:
        raise error_at(op, f"{op.name}: 'dst' must match 'data' in partitions, elements per "
                           f"partition and dtype", NKIRuntimeError)
    words = state_words("vector", dec.target)
    d, x, parts, free, shape, dt = dst.slot, data.slot, dst.parts, dst.free, dst.shape, dst.dtype
    prob = dec.scalar(op, op.prob, "prob", (parts, free))
    scale = np.float32(2.0 ** -24)
    zero = np.zeros((), dt)

    def run(env):
        bits = draw(engine_state(env, "vector", words), parts, free)
        u = (bits >> _U32(8)).astype(np.float32) * scale
        keep = u >= prob(env)
        env[d][...] = np.where(keep, env[x].reshape(parts, free), zero).reshape(shape)
    return finish(op, run, dst)


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.rng": rng,
    "nisa.set_rng_seed": set_rng_seed,
    "nisa.rand_set_state": rand_set_state,
    "nisa.rand_get_state": rand_get_state,
    "nisa.rand2": rand2,
    "nisa.dropout": dropout,
}

__all__ = ["DEFAULT_SEED", "seed_state", "xorwow_step", "draw", "HANDLERS"]
