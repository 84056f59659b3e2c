"""The ``nki.collectives`` operations between the ranks of a multi-rank launch
(``collective``), an ``nki`` op and its ``nisa`` twin lowered 1:1 by ``lower-nki-to-nisa``.

``nki.collectives`` is not ``nki.isa``: one call (``all_reduce``, ``all_gather``, ...) on
lists of tensors becomes one ``collective`` op per (src, dst) pair, with the operation as
its ``kind``, so it has no instruction definition.  The LNC2 cross-core instructions
``core_barrier`` and ``sendrecv`` are ``nki_mlir/instructions/cross_core.py``.

- ``collective(src, dst, [src1], [metadata], kind, groups, ...)``: one ``nki.collectives``
  call on one (src, dst) pair of this rank; ``kind`` is all_reduce, all_gather,
  reduce_scatter, all_to_all, all_gather_v, all_to_all_v (plus ``*_v_counts``: the write-back
  of the received counts into row 2 of ``metadata``, in place: src = dst = metadata),
  permute, permute_implicit or permute_implicit_reduce.  The verifier checks the documented
  static rules (memory spaces, dtypes, shapes against the group size, collective_dim, ops);
  the group against the launch is checked by the frontend.  Engine: dma.  Effects: reads
  ``src`` / ``src1`` / ``metadata``, writes ``dst``.

Semantics: NKI ``nki.collectives`` pages (aws-neuron-sdk nki/api/nki.collectives.rst).
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.irdl import (AttrSizedOperandSegments, irdl_op_definition, operand_def, opt_operand_def,
                       opt_prop_def, prop_def)
from xdsl.utils.exceptions import VerifyException

from .common import HBM_SPACES, describe, dtype_of, shape_of, space_of
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp

#: ``nki.collectives`` operations carried by ``nki.collective`` / ``nisa.collective`` (``kind``)
KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "all_gather_v",
         "all_to_all_v", "all_gather_v_counts", "all_to_all_v_counts", "permute", "permute_implicit",
         "permute_implicit_reduce")
#: kinds that combine the ranks' data with ``op``
REDUCING = ("all_reduce", "reduce_scatter", "permute_implicit_reduce")
#: reduction ops of nki.collectives (``nl.add``, ``nl.minimum``, ``nl.maximum``)
REDUCE_OPS = ("add", "minimum", "maximum")
#: kinds whose tensors must be in HBM (the NKI pages: "SBUF is not currently supported")
HBM_ONLY = ("all_to_all", "all_gather_v", "all_to_all_v", "permute")
#: the public API name of each kind (for messages)
API = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
       "all_to_all": "all_to_all", "all_gather_v": "all_gather_v", "all_to_all_v": "all_to_all_v",
       "all_gather_v_counts": "all_gather_v", "all_to_all_v_counts": "all_to_all_v", "permute": "collective_permute",
       "permute_implicit": "collective_permute_implicit",
       "permute_implicit_reduce": "collective_permute_implicit_reduce"}


def collective_api(op) -> str:
    kind = op.kind.data if isinstance(op.kind, StringAttr) else "?"
    return f"nki.collectives.{API.get(kind, kind)}"


def int_lists(a: ArrayAttr, what: str, api: str) -> list[list[int]]:
    """An ``ArrayAttr`` of ``ArrayAttr`` of integers as Python lists."""
    out = []
    for row in a.data:
        if not isinstance(row, ArrayAttr) or not all(isinstance(x, IntegerAttr) for x in row.data):
            raise VerifyException(f"{api}: '{what}' must be a list of lists of integers, got {a}")
        out.append([int(x.value.data) for x in row.data])
    return out


class _Collective(KeywordOp):
    """One ``nki.collectives`` operation on one (src, dst) pair of this rank (``kind``).

    ``groups`` are the replica groups (lists of global rank ids, disjoint, of equal size);
    ``pairs`` the (source, target) pairs of ``permute``; ``src1`` the second operand of
    ``permute_implicit_reduce``; ``metadata`` the uint32 counts tensor of the ``*_v`` kinds.
    """

    src = operand_def(MemRefType)
    src1 = opt_operand_def(MemRefType)
    dst = operand_def(MemRefType)
    metadata = opt_operand_def(MemRefType)
    kind = prop_def(StringAttr)
    groups = prop_def(ArrayAttr)
    op = opt_prop_def(StringAttr)
    collective_dim = opt_prop_def(IntegerAttr)
    pairs = opt_prop_def(ArrayAttr)
    channel = opt_prop_def(IntegerAttr)
    has_rdispls = opt_prop_def(IntegerAttr)
    priority = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        api = collective_api(self)
        kind = self.kind.data
        if kind not in KINDS:
            raise VerifyException(f"{api}: unknown collective kind {kind!r} (one of {', '.join(KINDS)})")
        groups = int_lists(self.groups, "groups", api)
        flat = [r for g in groups for r in g]
        if not groups or any(not g for g in groups) or any(r < 0 for r in flat):
            raise VerifyException(f"{api}: the replica group {groups} must be non-empty lists of "
                                  f"non-negative rank ids")
        if len(set(flat)) != len(flat):
            raise VerifyException(f"{api}: the sub-groups of the replica group {groups} overlap "
                                  f"(a rank may appear once)")
        if len({len(g) for g in groups}) != 1:
            raise VerifyException(f"{api}: the sub-groups of the replica group {groups} must all "
                                  f"have the same number of ranks")
        n = len(groups[0])
        roles = [("src", self.src), ("dst", self.dst)] + ([("src1", self.src1)] if self.src1 else [])
        spaces = {r: space_of(v) for r, v in roles}
        if not all(sp in HBM_SPACES or sp == "sbuf" for sp in spaces.values()):
            raise VerifyException(f"{api}: tensors must be in HBM or SBUF, got "
                                  + ", ".join(f"'{r}' in {sp}" for r, sp in spaces.items()))
        hbm = {sp in HBM_SPACES for sp in spaces.values()}
        if len(hbm) != 1:
            raise VerifyException(f"{api}: mixing memory spaces is not supported (all tensors on HBM "
                                  f"or all on SBUF), got " + ", ".join(f"'{r}' in {sp}" for r, sp in spaces.items()))
        on_hbm = hbm.pop()
        if kind in HBM_ONLY and not on_hbm:
            raise VerifyException(f"{api}: tensors must be on HBM (SBUF is not supported), got "
                                  f"'src' in {spaces['src']}")
        for r, v in roles[1:]:
            if dtype_of(v) != dtype_of(self.src):
                raise VerifyException(f"{api}: '{r}' and 'src' must have the same dtype, got "
                                      f"{describe(v)} and {describe(self.src)}")
        if kind in REDUCING:
            tok = self.op.data if self.op is not None else None
            if tok not in REDUCE_OPS:
                raise VerifyException(f"{api}: op={tok} is not supported (nl.add, nl.minimum or nl.maximum)")
        if "_v" in kind:
            self._verify_v(api, n)
            return
        self._verify_shapes(api, kind, n, on_hbm)

    def _verify_shapes(self, api: str, kind: str, n: int, on_hbm: bool) -> None:
        s, d = tuple(shape_of(self.src)), tuple(shape_of(self.dst))
        if self.src1 is not None and tuple(shape_of(self.src1)) != s:
            raise VerifyException(f"{api}: 'src1' {describe(self.src1)} and 'src' {describe(self.src)} "
                                  f"must have the same shape")
        if kind not in ("all_gather", "reduce_scatter", "all_to_all"):
            if s != d:
                raise VerifyException(f"{api}: 'dst' {describe(self.dst)} must have the shape of "
                                      f"'src' {describe(self.src)}")
            return
        dim = int(self.collective_dim.value.data) if self.collective_dim is not None else 0
        allowed = (0, 1) if kind == "all_gather" and not on_hbm else (0,)
        if dim not in allowed:
            where = "HBM" if on_hbm else "SBUF"
            raise VerifyException(f"{api}: collective_dim={dim} is not supported for {where} tensors "
                                  f"(supported: {', '.join(map(str, allowed))})")
        if not on_hbm and (len(s) != 2 or len(d) != 2):
            raise VerifyException(f"{api}: SBUF collectives operate on 2D tensors (one free "
                                  f"dimension), got 'src' {describe(self.src)}")
        if len(s) != len(d) or dim >= len(s):
            raise VerifyException(f"{api}: 'src' {describe(self.src)} and 'dst' {describe(self.dst)} "
                                  f"must have the same rank, with collective_dim={dim} in range")
        big, small, bname = (d, s, "dst") if kind == "all_gather" else (s, d, "src")
        if kind == "all_to_all":
            ok = s == d and s[dim] % n == 0
            want = f"the shape of 'src' with dimension {dim} divisible by the group size {n}"
        else:
            ok = (big[dim] == n * small[dim]
                  and all(a == b for i, (a, b) in enumerate(zip(big, small)) if i != dim))
            want = (f"'{bname}' must be the other tensor with dimension {dim} multiplied by the "
                    f"group size {n}")
        if not ok:
            raise VerifyException(f"{api}: 'src' {describe(self.src)} and 'dst' {describe(self.dst)} "
                                  f"do not fit: {'dst must have ' if kind == 'all_to_all' else ''}{want}")

    def _verify_v(self, api: str, n: int) -> None:
        m = self.metadata
        if m is None:
            raise VerifyException(f"{api}: needs a 'metadata' tensor")
        shape = tuple(shape_of(m))
        rows_ok = (len(shape) == 2 and shape[0] in (3, 4)) or (len(shape) == 3 and shape[0] == 1
                                                               and shape[1] in (3, 4))
        if str(dtype_of(m)) != "uint32" or not rows_ok or shape[-1] != n:
            raise VerifyException(f"{api}: 'metadata' must be a uint32 tensor of shape (rows, {n}) "
                                  f"(HBM) or (1, rows, {n}) (SBUF), rows 3 or 4, got {describe(m)}")
        if space_of(m) not in HBM_SPACES and len(shape) != 3:
            raise VerifyException(f"{api}: an SBUF 'metadata' is (1, rows, {n}), got {describe(m)}")




@irdl_op_definition
class CollectiveOp(_Collective, NkiInstruction):
    name = "nki.collective"
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class NisaCollectiveOp(_Collective, NisaInstruction):
    name = "nisa.collective"
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


NKI_OPS, NISA_OPS = register_twins(((CollectiveOp, NisaCollectiveOp, "dma"),))

__all__ = ["CollectiveOp", "NisaCollectiveOp", "NKI_OPS", "NISA_OPS"]
