"""Data-movement instructions beyond dma_copy/tensor_copy: dma_transpose, dma_compute, nc_n_gather, local_gather, nc_stream_shuffle.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: ops this module adds to the nki dialect
NKI_OPS: list = []
#: ops this module adds to the nisa dialect
NISA_OPS: list = []
