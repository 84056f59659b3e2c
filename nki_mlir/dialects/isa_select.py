"""Selection, search and sequence instructions: select_reduce, range_select, max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated, sequence_bounds, nonzero_with_count, topk.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: ops this module adds to the nki dialect
NKI_OPS: list = []
#: ops this module adds to the nisa dialect
NISA_OPS: list = []
