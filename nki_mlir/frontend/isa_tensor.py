"""Frontend handlers for ``nki.isa`` instructions: nc_matmul_mx, quantize_mx.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md section 5.4), ``dst`` first.
"""
from __future__ import annotations
