"""Frontend handlers for ``nki.isa`` instructions: register_alloc, register_move, register_load, register_store.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md section 5.4), ``dst`` first.
"""
from __future__ import annotations
