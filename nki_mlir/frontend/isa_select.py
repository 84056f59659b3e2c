"""Frontend handlers for ``nki.isa`` instructions: select_reduce, range_select, max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated, sequence_bounds, nonzero_with_count, topk.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md section 5.4), ``dst`` first.
"""
from __future__ import annotations
