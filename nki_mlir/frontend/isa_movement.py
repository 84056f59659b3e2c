"""Frontend handlers for ``nki.isa`` instructions: dma_transpose, dma_compute, nc_n_gather, local_gather, nc_stream_shuffle.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md section 5.4), ``dst`` first.
"""
from __future__ import annotations
