"""Versions of the SBUF blocks matmul operands are read from: a float32 copy of an operand
is reused until some instruction may have written its bytes.

``nisa.matmul`` computes in float32, so a bf16 / fp8 operand tile is converted first
(:mod:`.isa_matmul`).  Kernels read one SBUF operand in many matmuls -- a weight tile in
the matmul of every sequence tile, an input tile in every 512-column tile of the output --
and each converted it again.  Now:

- :func:`plan` (before a function is decoded) gives every storage block (:mod:`.blocks`)
  holding a placed SBUF ``nisa.alloc`` that some matmul reads an operand of a *version*:
  the count of the run's writes that may have changed the block (``State.versions``, by
  version id: a queue-mode instruction runs on a copy of the env, so not in an env slot);
- :func:`writes` names the versions an op may change -- a ``nisa.alloc`` its own blocks
  (it fills them with the sentinel), any other op the blocks of each SBUF operand it
  writes, or whose access it does not describe (an op with regions is none: its ops are
  decoded, and counted, one by one) -- and :func:`counting` makes its closure add one to
  each after it runs (:func:`.handlers.dispatch`);
- a matmul keeps the copy of an operand with the versions of the operand's blocks and the
  view's :func:`key` (address, shape, strides, dtype), and reuses it while both are the
  same (:func:`.isa_matmul._converted`).

Every write to a block's bytes is made by an op of the function (a placed tensor's bytes
are its block's, :mod:`.blocks`; another core's SBUF is its own), so an unchanged version
means unchanged bytes, in program order and in queue mode alike.  Which operand an op
writes comes from the access tables (:func:`~nki_mlir.dialects.effects.accesses`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import Float32Type, MemRefType
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation

from ..dialects.common import space_of
from ..dialects.effects import VIEW_OPS, accesses, base_buffer
from .blocks import blocks_of
from .env import STATE, Closure, Guarded

if TYPE_CHECKING:
    from .decoder import Decoder

#: :attr:`Decoder.memo <.decoder.Decoder.memo>` key of ``{block: version id}``
VERSIONS = "matmul operand block versions"
#: ops that change no memory byte though they take an SBUF operand
_NO_WRITE = frozenset(("nisa.release",))


def plan(dec: Decoder, fop: Operation) -> None:
    """Give a version id to the block of every copy of every placed SBUF ``nisa.alloc`` a
    ``nisa.matmul`` of ``fop`` reads a non-float32 operand of (``dec.blocks`` must be set)."""
    ids: dict = {}
    for op in fop.walk():
        if op.name != "nisa.matmul":
            continue
        for v in (op.stationary, op.moving):
            for blk in _blocks(dec, v, float32=False):
                if blk not in ids:
                    ids[blk] = len(ids)
    dec.memo[VERSIONS] = ids


def _blocks(dec: Decoder, v: SSAValue, float32: bool = True) -> set:
    """The storage blocks of ``v``'s base when it is a placed SBUF alloc (and not float32,
    unless ``float32``), else an empty set."""
    t = v.type
    if not isinstance(t, MemRefType) or space_of(t) != "sbuf":
        return set()
    if not float32 and isinstance(t.element_type, Float32Type):
        return set()
    base = base_buffer(v)
    if not (isinstance(base, OpResult) and base.op.name == "nisa.alloc"):
        return set()
    b = blocks_of(base.op, dec.blocks)
    return set() if b is None or b[0] != "sbuf" else {("sbuf", x) for x in b[1]}


def operand_versions(dec: Decoder, v: SSAValue) -> tuple[int, ...] | None:
    """The version ids of the matmul operand ``v``'s blocks, or None (not a placed SBUF
    tensor: its copy is not kept)."""
    slots = dec.memo.get(VERSIONS) or {}
    got = tuple(sorted(slots[b] for b in _blocks(dec, v, float32=False) if b in slots))
    return got or None


def writes(dec: Decoder, op: Operation) -> tuple[int, ...]:
    """The version ids ``op`` may change when it runs (see the module docstring)."""
    slots = dec.memo.get(VERSIONS)
    if not slots or op.regions:
        return ()
    name = op.name
    if name in VIEW_OPS or name in _NO_WRITE:
        return ()
    if name == "nisa.alloc":
        values = [op.results[0]]
    else:
        values = [v for v in op.operands if isinstance(v.type, MemRefType) and space_of(v) == "sbuf"]
        if not values:
            return ()
        if name.startswith("nisa.") and isinstance(op, IRDLOperation):
            read_only = set()
            written = set()
            for a in accesses(op):
                (written if a.is_write else read_only).add(id(a.value))
            values = [v for v in values if id(v) in written or id(v) not in read_only]
    out = set()
    for v in values:
        for b in _blocks(dec, v):
            s = slots.get(b)
            if s is not None:
                out.add(s)
    return tuple(sorted(out))


def counting(c: Closure, slots: tuple[int, ...]) -> Closure:
    """``c`` adding one to each of the versions ``slots`` (ids) after it runs (a
    :class:`~.env.Guarded` stays one, its program-order closure counting too)."""
    if type(c) is Guarded:
        g = Guarded.__new__(Guarded)
        g.op, g.impl = c.op, _then_count(c.impl, slots)
        po = getattr(c, "program_order", None)
        if po is not None:
            g.program_order = counting(po, slots)
        return g
    return _then_count(c, slots)


def _then_count(f: Closure, slots: tuple[int, ...]) -> Closure:
    if len(slots) == 1:
        (s,) = slots

        def run(env):
            f(env)
            v = env[STATE].versions
            v[s] = v.get(s, 0) + 1
        return run

    def run_all(env):
        f(env)
        v = env[STATE].versions
        for s in slots:
            v[s] = v.get(s, 0) + 1
    return run_all


def key(a: np.ndarray, rows: int, cols: int) -> tuple:
    """The bytes and layout of the operand view ``a`` converted to ``[rows, cols]``: equal
    keys under equal versions have equal float32 copies."""
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype, rows, cols)
