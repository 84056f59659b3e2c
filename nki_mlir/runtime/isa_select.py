"""Closure builders for select_reduce, range_select, max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated, sequence_bounds, nonzero_with_count, topk.

Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: op name -> closure builder ``builder(decoder, op)`` (merged into ``decoder.HANDLERS``)
HANDLERS: dict = {}
