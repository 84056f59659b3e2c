"""PSUM eviction for ``nisa-allocate``: when the PSUM tensors live at the same time need more
bytes per partition than PSUM has (8 banks of 2 KiB), a tensor that TensorE is done writing
but that is still read later is copied to SBUF and read there (docs/backend.md, "PSUM
eviction").

Why it is legal: only TensorE needs PSUM (a matmul or transpose writes its ``dst`` there);
the Vector and Scalar engines read and write SBUF as well as PSUM, with the same numerics
(NKI architecture guide, "PSUM"; ``nki.isa.tensor_copy``: bit-exact between equal dtypes on
Vector).  A kernel that keeps a dozen ``[128, 512]`` float32 accumulators live (one per
output tile, all read after the last matmul, as nki-library's ``bwmm_shard_on_I.py`` gate /
up projections do) fits once the finished accumulators sit in SBUF.

What is evicted: an automatically placed PSUM ``nisa.alloc`` ``T`` (not ``address=``, not a
tile this pass or :mod:`.spill` made) whose users are all ``nisa`` instructions (through
views) or its releases, written by at least one TensorE instruction, and read or written
after the op ``C`` of ``T``'s block that holds the last TensorE use (``C`` is that
instruction, or the loop / conditional around it), by Vector or Scalar engine instructions
only.  Then:

- ``T`` stays in PSUM up to ``C`` (its accumulation groups, ``psum_accumulate_flags`` and all,
  are untouched);
- right after ``C``: ``%e = nisa.alloc`` of ``T``'s type in SBUF (``nkim.name =
  "<name>.evicted"``, ``nkim.spill_of = "<name>"``) and ``nisa.tensor_copy(dst=%e, src=T)``
  on the Vector engine (the whole tensor, bit-exact; bytes never written stay never written,
  the copy being elementwise);
- every later use reads or writes the same view of ``%e`` instead; ``T``'s releases go.

How chosen (:func:`choose`): at the overflow the allocator reports (the tensor that found
no room and the tensors live with it), a candidate whose PSUM range would end (at ``C``)
before some tensor of the overflow starts is evicted: the one ending first (program order
breaking ties).  The allocator then places the function again, and evicts again while PSUM
does not fit.  The copy is an ordinary instruction: scheduled, run by the interpreter and
charged by the cost model.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from ..dialects.common import MemSpaceAttr, i64_attr
from ..dialects.effects import is_view
from ..dialects.nisa import AllocOp
from ..dialects.ods_ops import engine_of, op_class
from .alloc_sinking import ancestor_in
from .liveness import ProgramOrder
from .spill import ATTR_SPILL_OF, Use, clone_chain, movable_uses, alloc_name, view_chain

#: the engines whose instructions may read or write the evicted copy in SBUF
SBUF_ENGINES = ("vector", "scalar")


@dataclass
class Eviction:
    """How one PSUM tensor would be evicted (module docstring)."""

    alloc: AllocOp
    cut: Operation                      # ``C``: the copy goes right after it
    end: int                            # the last program number inside ``cut``
    later: list[Use]                    # the uses after ``cut``
    releases: list[Operation]


def plan(alloc: AllocOp, order: ProgramOrder) -> Eviction | None:
    """The eviction of ``alloc``'s tensor, or None when it cannot be evicted or nothing
    would be gained (no use after the last TensorE one)."""
    got = movable_uses(alloc, "psum", order)
    if got is None:
        return None
    uses, releases = got
    tensor = [u for u in uses if engine_of(u.op) == "tensor"]
    if not tensor:
        return None
    cut = ancestor_in(tensor[-1].op, alloc.parent_block())
    if cut is None:
        return None
    end = order.last[cut]
    later = [u for u in uses if u.index > end]
    if not later or any(engine_of(u.op) not in SBUF_ENGINES for u in later):
        return None
    return Eviction(alloc, cut, end, later, releases)


def choose(failed, live, func: FuncOp) -> AllocOp | None:
    """The PSUM tensor to evict at an overflow (module docstring): ``failed`` (an allocator
    ``Tensor``) found no room while the tensors ``live`` were live with it; None if none
    helps."""
    order = ProgramOrder.of(func)
    group = [failed, *live]
    best, best_key = None, None
    for t in group:
        if t.space != "psum" or t.pinned:
            continue
        e = plan(t.op, order)
        if e is None or not any(o is not t and o.base.start > e.end for o in group):
            continue
        key = (e.end, t.base.start)
        if best_key is None or key < best_key:
            best, best_key = t.op, key
    return best


def _sbuf_type(ty: MemRefType) -> MemRefType:
    return MemRefType.new([ty.shape, ty.element_type, ty.layout, MemSpaceAttr("sbuf")])


def apply(e: Eviction) -> None:
    """Rewrite the function as ``e`` says (module docstring)."""
    t = e.alloc.result
    name = alloc_name(e.alloc)
    copy_ = AllocOp.build(operands=[[]], result_types=[_sbuf_type(t.type)],
                          properties={"alignment": i64_attr(64)},
                          attributes={"nkim.name": StringAttr(f"{name}.evicted"),
                                      ATTR_SPILL_OF: StringAttr(name)})
    copy_.location = e.alloc.location
    move = op_class("nisa.tensor_copy").build(operands=[copy_.result, t],
                                              properties={"engine": StringAttr("vector")})
    move.location = e.cut.location
    block = e.cut.parent_block()
    block.insert_op_after(copy_, e.cut)
    block.insert_op_after(move, copy_)
    old_views: list[Operation] = []
    for u in e.later:
        for i in u.operands:
            chain = view_chain(u.op.operands[i], t)
            old_views.extend(chain)
            u.op.operands[i] = clone_chain(chain, copy_.result, u.op, _sbuf_type)
    for op in e.releases:
        op.detach()
        op.erase()
    for op in reversed(old_views):
        if op.parent is not None and is_view(op) and not any(r.uses for r in op.results):
            op.detach()
            op.erase()


def evict(alloc: AllocOp, func: FuncOp) -> None:
    """Evict ``alloc``'s tensor (module docstring).  Internal error if it cannot be."""
    e = plan(alloc, ProgramOrder.of(func))
    assert e is not None, "psum eviction: the tensor cannot be evicted (internal error)"
    apply(e)
