"""Random-number instructions: rng, set_rng_seed, rand_set_state, rand_get_state, rand2, dropout.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki.isa API reference (nki/api/nki/isa) (NKI
``nki.isa`` API pages of these instructions); the generator itself (per-lane XORWOW) is
:mod:`nki_mlir.runtime.isa_random`.

- ``rng(dst, engine=vector)``: 32 random bits per element, truncated to the integer ``dst``.
- ``set_rng_seed(src_seeds[1, 1])``: seed the Vector PRNG from one 32-bit value.
- ``rand_set_state(src_seeds, engine=gpsimd)`` / ``rand_get_state(dst, engine=gpsimd)``: load /
  store the raw XORWOW state, 6 uint32 per lane (GpSimd, trn2+) or 24 (Vector, trn3).
- ``rand2(dst, min, max)``: uniform values in ``[min, max]`` (Vector, trn3 only).
- ``dropout(dst, data, prob)``: zero each element with probability ``prob`` (Vector).
"""
from __future__ import annotations

from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import describe, dtype_of, free_size, shape_of, space_of
from .instruction import NisaInstruction, NkiInstruction, direct_lowering
from .syntax import KeywordOp

#: dtypes rng can write (32 random bits truncated to the low bits)
RNG_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.uint8, dtypes.uint16, dtypes.uint32)
#: uint32 words of XORWOW state per lane: 5 xorshift words + the Weyl counter
XORWOW_WORDS = 6
#: independent XORWOW states per lane of the Vector engine on trn3 (NeuronCore-v4)
VECTOR_V4_STATES = 4


def engine_of(op, default: str) -> str:
    """The op's engine, or ``default`` when absent / unknown (the nki twin before lowering)."""
    e = op.properties.get("engine")
    name = e.data if isinstance(e, StringAttr) else "unknown"
    return default if name == "unknown" else name


def state_words(engine: str, target: str) -> int:
    """uint32 PRNG state words per lane: 24 for Vector on trn3, else 6."""
    return XORWOW_WORDS * (VECTOR_V4_STATES if engine == "vector" and target == "trn3" else 1)


def _no_gpsimd_psum(op, role: str, v, eng: str) -> None:
    if eng == "gpsimd" and space_of(v) == "psum":
        raise VerifyException(f"{rules.api(op)}: operand '{role}' is in PSUM, but the GpSimd "
                              f"engine cannot access PSUM (use an SBUF tensor)")


# --------------------------------------------------------------------------- rng


class _Rng(KeywordOp):
    """``dst = low bits of 32 random bits`` per element (Vector, or GpSimd on trn2+)."""

    dst = operand_def(MemRefType)

    def verify_(self) -> None:
        api = rules.api(self)
        rules.tile(self, "dst", self.dst)
        eng = engine_of(self, "vector")
        allowed = ("vector",) if rules.target_of(self) == "trn1" else ("vector", "gpsimd")
        rules.engine(self, ("vector", "gpsimd"))
        if eng not in allowed:
            raise VerifyException(f"{api}: cannot run on the {eng} engine on "
                                  f"{rules.target_of(self)} (allowed: {', '.join(allowed)})")
        _no_gpsimd_psum(self, "dst", self.dst, eng)
        if dtype_of(self.dst) not in RNG_DTYPES:
            raise VerifyException(f"{api}: 'dst' dtype {dtypes.name_of(dtype_of(self.dst))} is not "
                                  f"supported; rng writes integer dtypes only (int8, int16, int32, "
                                  f"uint8, uint16, uint32)")


@irdl_op_definition
class RngOp(_Rng, NkiInstruction):
    name = "nki.rng"


@irdl_op_definition
class NisaRngOp(_Rng, NisaInstruction):
    name = "nisa.rng"


direct_lowering(RngOp, NisaRngOp, "vector")


# ------------------------------------------------------------------ set_rng_seed


class _SetRngSeed(KeywordOp):
    """Seed the Vector PRNG of every lane from the 32-bit value ``src_seeds[0, 0]``."""

    src_seeds = operand_def(MemRefType)

    def verify_(self) -> None:
        api = rules.api(self)
        rules.tile(self, "src_seeds", self.src_seeds)
        rules.engine(self, ("vector",))
        if shape_of(self.src_seeds)[0] != 1 or free_size(self.src_seeds) != 1:
            raise VerifyException(f"{api}: 'src_seeds' must be a [1, 1] tensor, got "
                                  f"{describe(self.src_seeds)}")
        if dtype_of(self.src_seeds).itemsize != 4:
            raise VerifyException(f"{api}: 'src_seeds' must hold a 32-bit value, got "
                                  f"{dtypes.name_of(dtype_of(self.src_seeds))}")


@irdl_op_definition
class SetRngSeedOp(_SetRngSeed, NkiInstruction):
    name = "nki.set_rng_seed"


@irdl_op_definition
class NisaSetRngSeedOp(_SetRngSeed, NisaInstruction):
    name = "nisa.set_rng_seed"


direct_lowering(SetRngSeedOp, NisaSetRngSeedOp, "vector")


# ---------------------------------------------------------- rand_set/get_state


def _verify_state(op, role: str, v) -> None:
    """rand_set_state / rand_get_state: a uint32 [P, 6] (GpSimd) or [P, 24] (Vector, trn3) tile."""
    api = rules.api(op)
    rules.require_target(op, "trn2", "the XORWOW state instructions")
    rules.tile(op, role, v)
    target = rules.target_of(op)
    allowed = ("gpsimd", "vector") if target == "trn3" else ("gpsimd",)
    rules.engine(op, ("gpsimd", "vector"))
    eng = engine_of(op, "gpsimd")
    if eng not in allowed:
        raise VerifyException(f"{api}: cannot run on the {eng} engine on {target} "
                              f"(allowed: {', '.join(allowed)}; Vector needs trn3)")
    _no_gpsimd_psum(op, role, v, eng)  # so PSUM state needs Vector, i.e. trn3
    if dtype_of(v) != dtypes.uint32:
        raise VerifyException(f"{api}: '{role}' must be uint32, got {dtypes.name_of(dtype_of(v))}")
    words = state_words(eng, target)
    if free_size(v) != words:
        raise VerifyException(f"{api}: '{role}' must hold {words} uint32 XORWOW state words per "
                              f"partition on the {eng} engine, got {describe(v)}")


class _RandSetState(KeywordOp):
    """Load the raw XORWOW state of lanes ``0..P-1`` from ``src_seeds[P, words]``."""

    src_seeds = operand_def(MemRefType)

    def verify_(self) -> None:
        _verify_state(self, "src_seeds", self.src_seeds)
        if space_of(self.src_seeds) != "sbuf":
            raise VerifyException(f"{rules.api(self)}: 'src_seeds' must be in SBUF, got "
                                  f"{space_of(self.src_seeds)}")


@irdl_op_definition
class RandSetStateOp(_RandSetState, NkiInstruction):
    name = "nki.rand_set_state"


@irdl_op_definition
class NisaRandSetStateOp(_RandSetState, NisaInstruction):
    name = "nisa.rand_set_state"


direct_lowering(RandSetStateOp, NisaRandSetStateOp, "gpsimd")


class _RandGetState(KeywordOp):
    """Store the raw XORWOW state of lanes ``0..P-1`` into ``dst[P, words]``."""

    dst = operand_def(MemRefType)

    def verify_(self) -> None:
        _verify_state(self, "dst", self.dst)


@irdl_op_definition
class RandGetStateOp(_RandGetState, NkiInstruction):
    name = "nki.rand_get_state"


@irdl_op_definition
class NisaRandGetStateOp(_RandGetState, NisaInstruction):
    name = "nisa.rand_get_state"


direct_lowering(RandGetStateOp, NisaRandGetStateOp, "gpsimd")


# ------------------------------------------------------------------------ rand2


class _Rand2(KeywordOp):
    """``dst = uniform in [min, max]`` (fp32, cast to ``dst``); ``min``/``max`` scalars or [P, 1]."""

    dst = operand_def(MemRefType)
    min = operand_def()
    max = operand_def()

    def verify_(self) -> None:
        api = rules.api(self)
        rules.require_target(self, "trn3", "nisa.rand2")
        rules.tile(self, "dst", self.dst)
        rules.engine(self, ("vector",))
        parts = shape_of(self.dst)[0]
        rules.per_partition_vector(self, "min", self.min, parts)
        rules.per_partition_vector(self, "max", self.max, parts)
        if dtype_of(self.dst) == dtypes.bool_:
            raise VerifyException(f"{api}: 'dst' dtype bool is not supported")


@irdl_op_definition
class Rand2Op(_Rand2, NkiInstruction):
    name = "nki.rand2"


@irdl_op_definition
class NisaRand2Op(_Rand2, NisaInstruction):
    name = "nisa.rand2"


direct_lowering(Rand2Op, NisaRand2Op, "vector")


# ---------------------------------------------------------------------- dropout


class _Dropout(KeywordOp):
    """``dst = 0`` with probability ``prob`` else ``data`` (no rescaling), per element."""

    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    prob = operand_def()

    def verify_(self) -> None:
        api = rules.api(self)
        rules.elementwise(self, ("dst", "data"), ("vector",))
        rules.per_partition_vector(self, "prob", self.prob, shape_of(self.data)[0])
        if dtype_of(self.dst) != dtype_of(self.data):
            raise VerifyException(f"{api}: 'dst' dtype {dtypes.name_of(dtype_of(self.dst))} must "
                                  f"match 'data' dtype {dtypes.name_of(dtype_of(self.data))}")
        if isinstance(self.prob.type, MemRefType):
            pdt = dtype_of(self.prob)
            if dtypes.is_int(dtype_of(self.data)) and pdt != dtypes.float32:
                raise VerifyException(f"{api}: 'prob' must be float32 when 'data' is an integer "
                                      f"tensor, got {dtypes.name_of(pdt)}")
            if not dtypes.is_float(pdt):
                raise VerifyException(f"{api}: 'prob' must be a float tensor, got "
                                      f"{dtypes.name_of(pdt)}")


@irdl_op_definition
class DropoutOp(_Dropout, NkiInstruction):
    name = "nki.dropout"


@irdl_op_definition
class NisaDropoutOp(_Dropout, NisaInstruction):
    name = "nisa.dropout"


direct_lowering(DropoutOp, NisaDropoutOp, "vector")


#: ops this module adds to the nki dialect
NKI_OPS: list = [RngOp, SetRngSeedOp, RandSetStateOp, RandGetStateOp, Rand2Op, DropoutOp]
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NisaRngOp, NisaSetRngSeedOp, NisaRandSetStateOp, NisaRandGetStateOp,
                  NisaRand2Op, NisaDropoutOp]
