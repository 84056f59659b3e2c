"""Frontend handlers for ``nki.isa`` instructions: rng, set_rng_seed, rand_set_state, rand_get_state, rand2, dropout.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md section 5.4), ``dst`` first.
"""
from __future__ import annotations
