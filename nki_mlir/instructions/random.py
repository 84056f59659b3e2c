"""The random-number instructions: rng, set_rng_seed, rand_set_state, rand_get_state, rand2,
dropout.

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa); the
generator itself (per-lane XORWOW, seeding, the order elements draw their bits in) is
:mod:`nki_mlir.runtime.prng`.  Uses of the 32 random bits: ``rng`` keeps the low bits
(``astype`` to the integer ``dst`` dtype); ``dropout`` keeps an element iff
``(bits >> 8) * 2**-24 >= prob`` (a uniform in [0, 1) with 24 bits, exact in fp32); ``rand2``
returns ``min + bits / (2**32 - 1) * (max - min)`` (fp32, so both ends are reachable), cast to
``dst``.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import describe, dtype_of, free_size, shape_of
from ..dialects.ods import Engine, Scalar, Stream, Tile
from ..dialects.ods_ops import engine_of
from ..errors import NKIRuntimeError
from ..runtime import numerics as nm
from ..runtime.env import STATE, Fault, finish
from ..runtime.prng import XORWOW_WORDS, draw, engine_state, seed_state
from .define import instruction

#: dtypes rng can write (32 random bits truncated to the low bits)
INTEGER = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.uint8, dtypes.uint16, dtypes.uint32)
#: dtypes rand2 can write (the nki.isa.rand2 page)
RAND2_DTYPES = (dtypes.float8_e4m3, dtypes.float8_e5m2, dtypes.float16, dtypes.bfloat16,
                dtypes.float32, *INTEGER)
#: independent XORWOW states per lane of the Vector engine on trn3 (NeuronCore-v4)
VECTOR_V4_STATES = 4
_U32 = np.uint32


def state_words(engine: str, target: str) -> int:
    """uint32 PRNG state words per lane: 24 for Vector on trn3, else 6."""
    return XORWOW_WORDS * (VECTOR_V4_STATES if engine == "vector" and target == "trn3" else 1)


# --------------------------------------------------------------------------------- rng


@instruction
class rng:
    """Fill ``dst`` with pseudo-random bits: 32 random bits per element, truncated to the
    integer ``dst`` dtype (its least significant bits).

    ``dst``: an SBUF or PSUM tile of int8, int16, int32, uint8, uint16 or uint32, at most 128
    partitions.  ``engine``: ``nisa.engine.vector`` (the default) or, on trn2 and newer,
    ``nisa.engine.gpsimd``, which cannot write PSUM.  Each partition draws from its own lane
    of the engine's generator, seeded by ``set_rng_seed`` / ``rand_set_state`` (or a fixed
    default seed).

    Raises ``NKIVerifyError`` (at the call) for another dtype, engine or memory.
    NKI docs: ``nki.isa.rng`` (nki/api/generated/nki.isa.rng).
    """

    dst = Tile(writes=True, dtypes=INTEGER)
    engine = Engine("vector", gpsimd="trn2")
    state = "prng"
    cost = Stream("dst", source="analogue: tensor_scalar (one vector stream over dst)")

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        eng = engine_of(op)
        words = state_words(eng, dec.target)
        d, parts, free, shape, dt = dst.slot, dst.parts, dst.free, dst.shape, dst.dtype

        def run(env):
            bits = draw(engine_state(env, eng, words), parts, free)
            env[d][...] = bits.astype(dt).reshape(shape)  # keeps the least significant bits
        return finish(op, run, dst)


# ------------------------------------------------------------------------ set_rng_seed


@instruction
class set_rng_seed:
    """Seed the Vector engine's pseudo-random generator from one 32-bit value.

    ``src_seeds``: a ``[1, 1]`` SBUF or PSUM tile holding a 32-bit value (int32, uint32 or
    float32, read as its 32 bits).  Every lane's state is derived from it, so the same seed
    gives the same ``rng`` / ``dropout`` / ``rand2`` values on the Vector engine.

    Raises ``NKIVerifyError`` for another shape or dtype.
    NKI docs: ``nki.isa.set_rng_seed`` (nki/api/generated/nki.isa.set_rng_seed).
    """

    src_seeds = Tile(dtypes=(dtypes.float32, dtypes.int32, dtypes.uint32))
    engine = Engine("vector", param=False)
    state = "prng"
    cost = Stream("src_seeds", source="analogue: tensor_scalar")
    beta1_result = False

    def verify(op):
        if shape_of(op.src_seeds)[0] != 1 or free_size(op.src_seeds) != 1:
            raise VerifyException(f"{rules.api(op)}: 'src_seeds' must be a [1, 1] tensor, got "
                                  f"{describe(op.src_seeds)}")

    def interpret(dec, op):
        src = dec.buf(op, op.src_seeds, "src_seeds")
        if src.dtype.itemsize != 4 or src.parts != 1 or src.free != 1:
            raise error_at(op, f"{op.name}: 'src_seeds' must be a [1, 1] 32-bit tensor, got "
                               f"{list(src.shape)}", NKIRuntimeError)
        s, words = src.slot, state_words("vector", dec.target)

        def run(env):
            seed = int(np.ascontiguousarray(env[s]).reshape(-1).view(np.uint32)[0])
            env[STATE].rng["vector"] = seed_state(seed, words)
        return finish(op, run)


# ------------------------------------------------------------- rand_set/get_state


def _verify_state(op, role: str) -> None:
    """A state operand holds 6 uint32 words per partition (GpSimd, Vector before trn3) or 24
    (Vector on trn3: 4 states per lane)."""
    eng, target = engine_of(op), rules.target_of(op)
    words = state_words(eng, target)
    v = getattr(op, role)
    if free_size(v) != words:
        raise VerifyException(f"{rules.api(op)}: '{role}' must hold {words} uint32 XORWOW state "
                              f"words per partition on the {eng} engine, got {describe(v)}")


def _state_operand(dec, op, role: str):
    b = dec.buf(op, getattr(op, role), role)
    eng = engine_of(op)
    words = state_words(eng, dec.target)
    if b.free != words or b.dtype != np.uint32:
        raise error_at(op, f"{op.name}: '{role}' must be uint32 with {words} state words per "
                           f"partition on the {eng} engine, got {list(b.shape)}", NKIRuntimeError)
    return b, eng, words


@instruction
class rand_set_state:
    """Load the raw XORWOW state of the engine's lanes: partition ``p`` of ``src_seeds``
    becomes the state of lane ``p``.

    ``src_seeds``: an SBUF uint32 tile ``[P, 6]`` (GpSimd; Vector before trn3) or ``[P, 24]``
    (Vector on trn3, 4 states per lane).  ``engine``: ``nisa.engine.gpsimd`` (the default) or,
    on trn3, ``nisa.engine.vector``.  Needs trn2 or newer.

    Raises ``NKIVerifyError`` for another target, engine, memory, dtype or size.
    NKI docs: ``nki.isa.rand_set_state`` (nki/api/generated/nki.isa.rand_set_state).
    """

    src_seeds = Tile(spaces=("sbuf",), dtypes=(dtypes.uint32,))
    engine = Engine("gpsimd", vector="trn3")
    since = "trn2"
    state = "prng"
    cost = Stream("src_seeds", source="analogue: tensor_scalar")
    beta1_result = False

    def verify(op):
        _verify_state(op, "src_seeds")

    def interpret(dec, op):
        src, eng, words = _state_operand(dec, op, "src_seeds")
        s, parts = src.slot, src.parts

        def run(env):
            engine_state(env, eng, words)[:parts] = env[s].reshape(parts, words)
        return finish(op, run)


@instruction
class rand_get_state:
    """Store the raw XORWOW state of the engine's lanes: lane ``p``'s state goes to partition
    ``p`` of ``dst``.

    ``dst``: a uint32 tile ``[P, 6]`` (GpSimd; Vector before trn3) or ``[P, 24]`` (Vector on
    trn3), in SBUF (or PSUM with the Vector engine).  ``engine``: ``nisa.engine.gpsimd`` (the
    default) or, on trn3, ``nisa.engine.vector``.  Needs trn2 or newer.

    Raises ``NKIVerifyError`` for another target, engine, memory, dtype or size.
    NKI docs: ``nki.isa.rand_get_state`` (nki/api/generated/nki.isa.rand_get_state).
    """

    dst = Tile(writes=True, dtypes=(dtypes.uint32,))
    engine = Engine("gpsimd", vector="trn3")
    since = "trn2"
    state = "prng"
    cost = Stream("dst", source="analogue: tensor_scalar")
    beta1_result = False

    def verify(op):
        _verify_state(op, "dst")

    def interpret(dec, op):
        dst, eng, words = _state_operand(dec, op, "dst")
        d, parts, shape = dst.slot, dst.parts, dst.shape

        def run(env):
            env[d][...] = engine_state(env, eng, words)[:parts].reshape(shape)
        return finish(op, run, dst)


# ------------------------------------------------------------------------------- rand2


@instruction
class rand2:
    """Fill ``dst`` with pseudo-random values uniform in ``[min, max]`` (Vector engine, trn3).

    The values are generated in float32 and converted to the ``dst`` dtype (float8_e4m3,
    float8_e5m2, float16, bfloat16, float32 or an integer type).  ``min`` / ``max``: numbers
    or ``[P, 1]`` per-partition tiles, with ``min < max``.  ``dst`` is an SBUF or PSUM tile.

    Raises ``NKIVerifyError`` before trn3 or for another dtype or shape, and
    ``NKIRuntimeError`` when ``min >= max`` at run time.
    NKI docs: ``nki.isa.rand2`` (nki/api/generated/nki.isa.rand2).
    """

    dst = Tile(writes=True, dtypes=RAND2_DTYPES)
    min = Scalar()
    max = Scalar()
    engine = Engine("vector", param=False)
    since = "trn3"
    state = "prng"
    cost = Stream("dst", source="analogue: tensor_scalar")

    def interpret(dec, op):
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


# ----------------------------------------------------------------------------- dropout


@instruction
class dropout:
    """``dst = data`` with each element replaced by zero with probability ``prob`` (no
    rescaling of the kept elements), on the Vector engine.

    ``data`` / ``dst``: SBUF or PSUM tiles of the same dtype, partition count and elements per
    partition.  ``prob``: a number or a ``[P, 1]`` tile (one drop probability per partition);
    a float tile, float32 when ``data`` is an integer tile.  1.0 drops everything, 0.0 keeps
    everything.

    Raises ``NKIVerifyError`` for mismatched tiles or a ``prob`` of another shape or dtype.
    NKI docs: ``nki.isa.dropout`` (nki/api/generated/nki.isa.dropout).
    """

    dst = Tile(writes=True, like="data", same_dtype_as="data")
    data = Tile()
    prob = Scalar()
    engine = Engine("vector", param=False)
    state = "prng"
    cost = Stream("data", source="analogue: tensor_scalar")

    def verify(op):
        if not isinstance(op.prob.type, MemRefType):
            return
        api, pdt = rules.api(op), dtype_of(op.prob)
        if dtypes.is_int(dtype_of(op.data)) and pdt != dtypes.float32:
            raise VerifyException(f"{api}: 'prob' must be float32 when 'data' is an integer "
                                  f"tensor, got {dtypes.name_of(pdt)}")
        if not dtypes.is_float(pdt):
            raise VerifyException(f"{api}: 'prob' must be a float tensor, got {dtypes.name_of(pdt)}")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        if dst.parts != data.parts or dst.free != data.free or \
                dec.declared(dst) != dec.declared(data):
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
