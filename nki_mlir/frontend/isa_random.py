"""Frontend handlers for ``nki.isa`` instructions: rng, set_rng_seed, rand_set_state, rand_get_state, rand2, dropout.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki.isa API reference (nki/api/nki/isa)), ``dst`` first.
Handlers check the kinds of the arguments; shapes, dtypes, engines and targets are the op
verifiers' job (:mod:`nki_mlir.dialects.isa_random`), reported at the call's line.
"""
from __future__ import annotations

from ..dialects import isa_random as rnd
from . import args as A
from .builtins import handles


@handles("nisa.rng")
def rng(cg, dst, engine=None, name=None):
    """32 random bits per element of ``dst`` (low bits kept); Vector by default."""
    api = "nisa.rng"
    A.emit(cg, rnd.RngOp, {"dst": A.tensor(cg, api, "dst", dst).value},
           {"engine": A.engine(cg, api, engine)})


@handles("nisa.set_rng_seed")
def set_rng_seed(cg, src_seeds, name=None):
    """Seed the Vector PRNG from the 32-bit value in ``src_seeds[1, 1]``."""
    api = "nisa.set_rng_seed"
    A.emit(cg, rnd.SetRngSeedOp, {"src_seeds": A.tensor(cg, api, "src_seeds", src_seeds).value})


@handles("nisa.rand_set_state")
def rand_set_state(cg, src_seeds, engine=None, name=None):
    """Load the XORWOW state of each lane from ``src_seeds[P, 6 | 24]`` (GpSimd by default)."""
    api = "nisa.rand_set_state"
    A.emit(cg, rnd.RandSetStateOp, {"src_seeds": A.tensor(cg, api, "src_seeds", src_seeds).value},
           {"engine": A.engine(cg, api, engine)})


@handles("nisa.rand_get_state")
def rand_get_state(cg, dst, engine=None, name=None):
    """Store the XORWOW state of each lane into ``dst[P, 6 | 24]`` (GpSimd by default)."""
    api = "nisa.rand_get_state"
    A.emit(cg, rnd.RandGetStateOp, {"dst": A.tensor(cg, api, "dst", dst).value},
           {"engine": A.engine(cg, api, engine)})


@handles("nisa.rand2")
def rand2(cg, dst, min, max, name=None):  # noqa: A002 -- the NKI parameter names
    """Uniform random values in ``[min, max]`` (trn3, Vector)."""
    api = "nisa.rand2"
    A.emit(cg, rnd.Rand2Op, {"dst": A.tensor(cg, api, "dst", dst).value,
                             "min": A.tile_or_scalar(cg, api, "min", min),
                             "max": A.tile_or_scalar(cg, api, "max", max)})


@handles("nisa.dropout")
def dropout(cg, dst, data, prob, name=None):
    """``dst = data`` with each element zeroed with probability ``prob`` (no rescaling)."""
    api = "nisa.dropout"
    A.emit(cg, rnd.DropoutOp, {"dst": A.tensor(cg, api, "dst", dst).value,
                               "data": A.tensor(cg, api, "data", data).value,
                               "prob": A.tile_or_scalar(cg, api, "prob", prob)})
