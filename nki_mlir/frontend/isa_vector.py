"""Frontend handlers for ``nki.isa`` instructions: scalar_tensor_tensor, tensor_partition_reduce, tensor_scalar_reduce, tensor_scalar_cumulative, tensor_tensor_scan, bn_stats, bn_aggr, exponential, activate2.

Signatures mirror the NKI 0.6 ``nki.isa`` API (nki_spec.md section 5.4), ``dst`` first.
"""
from __future__ import annotations
