"""Closure builders for the language-level ops ``nisa.shared_constant`` and ``nisa.device_print``.

- ``nisa.shared_constant``: the constant's raw bits are decoded once (decode time) from
  the op's dense attribute; every run gets a fresh HBM array holding them (so a stray
  write cannot leak into the next run).
- ``nisa.device_print``: prints ``prefix`` and the tensor's current values to stdout
  (what ``nki.simulate`` does for ``nl.device_print``, nki.language API reference (nki/api/nki/language)).
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from ..dialects.lang_ops import bits_to_array
from .env import guard

if TYPE_CHECKING:
    from .decoder import Decoder


def shared_constant(dec: Decoder, op):
    s = dec.define(op.result, op)
    b = dec.bufs[op.result]
    data = bits_to_array(op.value, b.dtype, b.shape)

    def run(env):
        env[s] = data.copy()
    return guard(op, run)


def device_print(dec: Decoder, op):
    b = dec.buf(op, op.tensor, "tensor")
    slot, prefix = b.slot, op.prefix.data

    def run(env):
        print(prefix, np.array(env[slot]), file=sys.stdout, flush=True)
    return guard(op, run)


HANDLERS = {
    "nisa.shared_constant": shared_constant,
    "nisa.device_print": device_print,
}
