"""Frontend handlers for ``NkiTensor`` methods (``t.slice(...)``, ``t.ap(...)``, ...).

A method ``m`` is registered as ``@handles("tensor.m")`` and called as
``handler(cg, tensor, *args, **kwargs)``.  Semantics: nki_spec.md section 2.5.
"""
from __future__ import annotations
