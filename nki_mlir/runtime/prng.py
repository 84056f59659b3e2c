"""The per-lane XORWOW pseudo-random generator of the Vector and GpSimd engines, and its
per-run state (read by the random-number instructions, ``nki_mlir/instructions/random.py``).

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
"""
from __future__ import annotations

import numpy as np

from .env import STATE
from .memory import PARTITIONS

#: uint32 words of one XORWOW state: 5 xorshift words + the Weyl counter
XORWOW_WORDS = 6
#: seed of an engine's PRNG before any set_rng_seed / rand_set_state in the run
DEFAULT_SEED = 0x2545F491
#: Marsaglia's Weyl-sequence increment
WEYL = np.uint32(362437)
_U32 = np.uint32


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


__all__ = ["XORWOW_WORDS", "DEFAULT_SEED", "seed_state", "xorwow_step", "draw", "engine_state"]
