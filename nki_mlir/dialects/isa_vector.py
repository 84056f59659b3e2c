"""Vector/Scalar-engine arithmetic instructions beyond the core set: scalar_tensor_tensor, tensor_partition_reduce, tensor_scalar_reduce, tensor_scalar_cumulative, tensor_tensor_scan, bn_stats, bn_aggr, exponential, activate2.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: ops this module adds to the nki dialect
NKI_OPS: list = []
#: ops this module adds to the nisa dialect
NISA_OPS: list = []
