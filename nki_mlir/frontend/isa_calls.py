"""Frontend pieces of the index-pattern instructions (``iota``, ``affine_select``) and the
``nki.isa`` version queries.

The argument conversions of the ``pattern`` and ``offset_index`` kinds
(:mod:`nki_mlir.dialects.ods_forms` ``PairList`` / ``LoopIndex``, registered in
:data:`.ods_kinds.CONVERTERS`), :func:`loop_offset` for the definitions' ``call`` hooks, and
the handlers of ``get_nc_version`` / ``get_nc_sub_version``.  Semantics: nki.isa API
reference (nki/api/nki/isa).
"""
from __future__ import annotations

from xdsl.ir import SSAValue

from ..dialects.ods_forms import LoopIndex, PairList
from ..errors import NKITypeError
from .builtins import handles
from .ods_kinds import CONVERTERS
from .values import Index


def pattern_pairs(cg, api: str, p, pattern) -> list[list[int]]:
    """A ``pattern`` argument (:class:`~nki_mlir.dialects.ods_forms.PairList`): a list of
    ``[step, count]`` pairs of integers, else ``NKITypeError``."""
    try:
        pairs = [[int(s), int(c)] for s, c in pattern]
    except (TypeError, ValueError):
        raise cg.b.error(f"{api}: pattern must be a list of [step, count] pairs, got {pattern!r}", NKITypeError)
    return pairs


def loop_offset(cg, api: str, offset) -> tuple[int, SSAValue | None]:
    """An iota / affine_select ``offset``: (its constant part, an SSA ``index`` computing its
    loop-index part or None).  An offset may be an affine expression of loop indices."""
    if isinstance(offset, Index):
        rest = Index(offset.terms, 0)
        return offset.const, (cg.b.materialize(rest) if rest.terms else None)
    try:
        return int(offset), None
    except (TypeError, ValueError):
        raise cg.b.error(f"{api}: offset must be an int or an affine expression of loop "
                         f"indices, got {offset!r}", NKITypeError) from None


CONVERTERS[PairList] = pattern_pairs
CONVERTERS[LoopIndex] = lambda cg, api, p, v: v  # the call hook computed the index value


@handles("nisa.get_nc_sub_version")
def get_nc_sub_version(cg):
    """The silicon revision within the target's generation: 0 (nki-mlir models the first)."""
    return 0


@handles("nisa.get_nc_version")
def get_nc_version(cg):
    from ..targets import GENERATION
    from .isa_enums import nc_version
    return getattr(nc_version, f"gen{GENERATION[cg.b.target]}")
