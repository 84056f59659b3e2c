"""Closure builders for register_alloc, register_move, register_load, register_store.

Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: op name -> closure builder ``builder(decoder, op)`` (merged into ``decoder.HANDLERS``)
HANDLERS: dict = {}
