"""Engine registers and runtime control: register_alloc, register_move, register_load, register_store.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki_spec.md section 5.4.
"""
from __future__ import annotations

#: ops this module adds to the nki dialect
NKI_OPS: list = []
#: ops this module adds to the nisa dialect
NISA_OPS: list = []
