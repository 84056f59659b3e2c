"""Closure builders for the ``nisa.no_reorder_begin/end`` markers (no-ops) and the
control-flow ops of runtime loops (``scf.while``, ``scf.condition``, ``arith.cmpi``; the
builders of the last three live in :mod:`.control`).  The register instructions are
``nki_mlir/instructions/registers.py``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import Operation

from . import control

if TYPE_CHECKING:
    from .decoder import Decoder


def no_reorder_marker(dec: Decoder, op: Operation):
    return None  # program order is what the interpreter runs anyway


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.no_reorder_begin": no_reorder_marker,
    "nisa.no_reorder_end": no_reorder_marker,
    "scf.while": control.scf_while,
    "scf.condition": control.scf_condition,
    "arith.cmpi": control.arith_cmpi,
}
