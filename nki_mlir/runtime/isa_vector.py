"""Closure builders for scalar_tensor_tensor, tensor_partition_reduce, tensor_scalar_reduce, tensor_scalar_cumulative, tensor_tensor_scan, bn_stats, bn_aggr, exponential, activate2.

Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: op name -> closure builder ``builder(decoder, op)`` (merged into ``decoder.HANDLERS``)
HANDLERS: dict = {}
