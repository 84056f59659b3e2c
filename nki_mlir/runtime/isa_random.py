"""Closure builders for rng, set_rng_seed, rand_set_state, rand_get_state, rand2, dropout.

Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: op name -> closure builder ``builder(decoder, op)`` (merged into ``decoder.HANDLERS``)
HANDLERS: dict = {}
