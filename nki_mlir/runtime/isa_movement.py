"""Closure builders for dma_transpose, dma_compute, nc_n_gather, local_gather, nc_stream_shuffle.

Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: op name -> closure builder ``builder(decoder, op)`` (merged into ``decoder.HANDLERS``)
HANDLERS: dict = {}
