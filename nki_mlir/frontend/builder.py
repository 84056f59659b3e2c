"""IR construction for the frontend: insertion point, locations, constants, index math, views.

Every op is inserted at the end of the current block, stamped with the current source
location and verified at once, so a verifier rule broken by the kernel surfaces as an
:class:`~nki_mlir.errors.NKIVerifyError` pointing at the user's line.  The exceptions are
the ops this builder makes itself from values it has already checked -- constants, index
arithmetic, ``memref.subview`` / ``memref.reinterpret_cast`` whose static lists and result
type come from the same numbers (``emit(..., verify=False)``): no kernel can make their
verifiers fail, so they are verified once, with the whole module after the pass pipeline
(:func:`nki_mlir.driver.pipeline.run_pipeline`; located at their source line like any op).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects import arith
from xdsl.dialects.builtin import (DYNAMIC_INDEX, DenseArrayBase, FloatAttr, IndexType, IntegerAttr,
                                    f32, i32, i64)
from xdsl.dialects import memref as memref_d
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import make_loc
from ..dialects.common import memref
from ..errors import NKIError, NKISyntaxError, NKITypeError, NKIVerifyError, SourceLoc
from .values import Index, Tensor, as_index, simplify

F32_MAX = 3.4028234663852886e38   # the largest finite float32
#: The smallest magnitude that rounds to infinity in float32 (round to nearest even):
#: halfway between F32_MAX and 2**128.  Python floats below it (``3.4028235e38``, the usual
#: decimal spelling of float32's maximum) round to a finite float32.
F32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


def view_op(cls: type[Operation], source: SSAValue, dyn_offsets: Sequence[SSAValue],
            static_offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
            rtype: Attribute) -> Operation:
    """``cls(source, dyn_offsets, [], [], static_offsets, sizes, strides, rtype)`` for ``cls``
    ``memref.SubviewOp`` or ``memref.ReinterpretCastOp`` (dynamic offsets only, static sizes
    and strides): the op those constructors build -- the same operands, result type and
    properties in the same order (the three static lists, then the operand segment sizes) --
    made with ``Operation.create``, without the generic IRDL argument mapping they go
    through (a large unrolled kernel makes ~10^5 views)."""
    key = (tuple(static_offsets), tuple(sizes), tuple(strides), len(dyn_offsets))
    props = _VIEW_PROPS.get(key)
    if props is None:
        if len(_VIEW_PROPS) >= 1 << 16:
            _VIEW_PROPS.clear()
        props = _VIEW_PROPS[key] = {
            "static_offsets": DenseArrayBase.from_list(i64, key[0]),
            "static_sizes": DenseArrayBase.from_list(i64, key[1]),
            "static_strides": DenseArrayBase.from_list(i64, key[2]),
            "operandSegmentSizes": DenseArrayBase.from_list(i32, (1, key[3], 0, 0))}
    # (Operation.__init__ copies the properties dict: the shared one is never the op's)
    return cls.create(operands=[source, *dyn_offsets], result_types=[rtype], properties=props)


#: (static offsets, sizes, strides, number of dynamic offsets) -> a view op's properties
#: (immutable attributes; views of one kernel repeat a few layouts)
_VIEW_PROPS: dict[tuple, dict] = {}


class IRBuilder:
    """Appends ops to a block with the current source location."""

    def __init__(self, block: Block):
        self.block = block
        #: the kernel function's entry block (ops that dominate every use go at its start)
        self.entry = block
        #: launch-grid axis -> the result of its ``program_id`` op (a symbolic trace: spmd.py)
        self.program_ids: dict[int, SSAValue] = {}
        self.loc: SourceLoc | None = None
        #: id(SourceLoc) -> (the SourceLoc, its location attribute), for emit()
        self._loc_attrs: dict[int, tuple[SourceLoc, object]] = {}
        self._consts: dict[tuple[int, object], SSAValue] = {}
        #: (terms, const, block) -> (the SSA value, the ops computing it): see :meth:`materialize`
        self._indices: dict[tuple, tuple[SSAValue, list[Operation]]] = {}
        #: view ops emitted, by everything that makes them (see :meth:`_view`)
        self._views: dict[tuple, Operation] = {}
        #: the kernel is written against NKI Beta 1 (it imported ``neuronxcc.nki``)
        self.beta1 = False
        #: static ranges (start, stop, step) of the IR loops' induction variables
        self.loop_ranges: dict[SSAValue, tuple[int, int, int]] = {}

    # ------------------------------------------------------------------ insertion
    @contextmanager
    def at(self, block: Block) -> Iterator[None]:
        saved = self.block
        self.block = block
        try:
            yield
        finally:
            self.block = saved

    def emit(self, op: Operation, verify: bool = True) -> Operation:
        loc = self.loc
        if loc is not None:     # (SourceLoc is immutable: the same object, the same attribute)
            hit = self._loc_attrs.get(id(loc))
            if hit is None or hit[0] is not loc:
                hit = self._loc_attrs[id(loc)] = (loc, make_loc(loc))
            op.location = hit[1]
        block = self.block
        if op.parent is None and not op.regions:
            # Block.add_op without _attach_op's walk up the block's ancestors: an op
            # without regions contains no block, so it is none of them
            op.parent = block
            last = block._last_op  # noqa: SLF001
            if last is None:
                block._first_op = op  # noqa: SLF001
            else:
                last._insert_next_op(op)  # noqa: SLF001
            block._last_op = op  # noqa: SLF001
        else:
            block.add_op(op)
        if verify:
            try:
                op.verify_()  # the op's own rules (constraints + verify_), not its block's
            except VerifyException as exc:
                op.detach()
                op.erase(safe_erase=False)
                raise NKIVerifyError(str(exc), self.loc) from None
        return op

    def error(self, message: str, cls: type[NKIError] = NKIError, **kw) -> NKIError:
        return cls(message, self.loc, **kw)

    # ------------------------------------------------------------------ constants
    def const_index(self, v: int) -> SSAValue:
        key = (id(self.block), ("index", int(v)))
        if key not in self._consts:
            op = self.emit(arith.ConstantOp(IntegerAttr(int(v), IndexType())), verify=False)
            op.results[0].name_hint = f"c{int(v)}".replace("-", "m")
            self._consts[key] = op.results[0]
        return self._consts[key]

    def const_scalar(self, v: float | int, dtype=None) -> SSAValue:
        """A scalar immediate: f32 for floats (NKI's arithmetic scalars), else the int dtype."""
        if dtype is not None and dtypes.is_int(dtypes.as_dtype(dtype)) and dtypes.as_dtype(dtype) != dtypes.bool_:
            attr: Attribute = dtypes.int_constant_attr(int(v), dtypes.as_dtype(dtype))
            t: Attribute = attr.type
        else:
            fv = float(v)
            if math.isfinite(fv) and abs(fv) >= F32_OVERFLOW:
                raise self.error(f"the scalar {v!r} is out of float32 range (|x| <= {F32_MAX:.8g}); "
                                 f"NKI's scalar operands are float32", NKITypeError)
            key = (id(self.block), ("f32", repr(fv)))
            hit = self._consts.get(key)
            if hit is not None:
                return hit
            if math.isfinite(fv) and abs(fv) > F32_MAX:
                fv = math.copysign(F32_MAX, fv)  # what float32 rounding makes of it
            hit = self._consts[key] = self.emit(arith.ConstantOp(FloatAttr(fv, f32), f32), verify=False).results[0]
            return hit
        key = (id(self.block), (str(t), int(v)))
        if key not in self._consts:
            self._consts[key] = self.emit(arith.ConstantOp(attr, t), verify=False).results[0]
        return self._consts[key]

    # ----------------------------------------------------------------- index math
    def materialize(self, x: Index | int) -> SSAValue:
        """An SSA ``index`` value computing ``x``: muli/addi emitted at the insertion point,
        or the value the insertion block already computes for the same expression (an op
        earlier in the block dominates every later use; one erased since, by a call or loop
        traced again, is not reused).  Sharing the value also lets :meth:`_view` share the
        views it offsets: a launch traced once offsets every HBM view by ``program_id``."""
        x = as_index(x)
        if not x.terms:
            return self.const_index(x.const)
        if len(x.terms) == 1 and x.terms[0][1] == 1 and not x.const:
            return x.terms[0][0]
        return self._shared(("affine", x.terms, x.const), lambda: self._emit_index(x))

    def _shared(self, key: tuple, build) -> SSAValue:
        """The value ``build()`` emits at the end of the insertion block, or the one it
        emitted there before for the same ``key`` if all those ops are still in the block
        (see :meth:`materialize`)."""
        key = (*key, self.block)
        hit = self._indices.get(key)
        if hit is not None and all(op.parent is self.block for op in hit[1]):
            return hit[0]
        first = self.block.last_op
        value = build()
        ops = []
        op = self.block.last_op
        while op is not None and op is not first:
            ops.append(op)
            op = op.prev_op
        self._indices[key] = (value, ops)
        return value

    def _emit_index(self, x: Index) -> SSAValue:
        acc: SSAValue | None = None
        for sym, coeff in x.terms:
            term = sym if coeff == 1 else self._binop(arith.MuliOp, sym, self.const_index(coeff))
            acc = term if acc is None else self._binop(arith.AddiOp, acc, term)
        if acc is None:
            return self.const_index(x.const)
        if x.const:
            acc = self._binop(arith.AddiOp, acc, self.const_index(x.const))
        return acc

    def _binop(self, cls, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(cls(a, b), verify=False).results[0]

    def index_binop(self, kind: str, a: Index | int, b: Index | int) -> Index | int:
        """Non-affine index arithmetic (``//``, ``%``, ``*`` of two indices, min/max)."""
        cls = {"floordiv": arith.FloorDivSIOp, "mod": arith.RemSIOp, "mul": arith.MuliOp,
               "min": arith.MinSIOp, "max": arith.MaxSIOp}[kind]
        a, b = as_index(a), as_index(b)
        res = self._shared((kind, a.terms, a.const, b.terms, b.const),
                           lambda: self._binop(cls, self.materialize(a), self.materialize(b)))
        return Index.of(res)

    def index_arith(self, op: str, a: Index | int, b: Index | int) -> Index | int:
        """``a <op> b`` on loop-index expressions and ints (``op``: add sub mul floordiv mod).

        Affine results stay symbolic (``(i + 1) * 128 - i * 128`` folds to 128); ``//`` by a
        divisor of every coefficient stays affine; other products, ``//`` and ``%`` emit
        ``arith`` ops.  Raises NKITypeError for any other operand or operator.
        """
        from .values import is_int
        for v in (a, b):
            if not (isinstance(v, Index) or is_int(v)):
                raise self.error(f"a loop index can only be combined with integers, not "
                                 f"{type(v).__name__}", NKITypeError)
        if op == "add":
            return simplify(as_index(a).add(b))
        if op == "sub":
            return simplify(as_index(a).sub(b))
        if op == "mul":
            if is_int(b):
                return simplify(as_index(a).scale(int(b)))
            if is_int(a):
                return simplify(as_index(b).scale(int(a)))
            return self.index_binop("mul", a, b)
        if op == "floordiv":
            if is_int(b) and (q := as_index(a).floordiv_exact(int(b))) is not None:
                return simplify(q)
            return self.index_binop("floordiv", a, b)
        if op == "mod":
            return self.index_binop("mod", a, b)
        raise self.error("only +, -, *, // and % apply to a loop index", NKISyntaxError)

    # ----------------------------------------------------------------------- views
    def subview(self, t: Tensor, offsets: Sequence[Index | int], sizes: Sequence[int],
                steps: Sequence[int], keep: Sequence[bool]) -> Tensor:
        """``memref.subview`` of ``t``; dims with ``keep[d] == False`` are dropped (rank-reducing)."""
        static_offsets: list[int] = []
        dyn: list[SSAValue] = []
        total = as_index(t.offset_index)
        for d, off in enumerate(offsets):
            off = simplify(off)
            if isinstance(off, Index):
                static_offsets.append(DYNAMIC_INDEX)
                dyn.append(self.materialize(off))
            else:
                static_offsets.append(int(off))
            total = total.add(as_index(off).scale(t.strides[d]))
        offset = None if dyn or t.offset is None else simplify(total)
        strides = [t.strides[d] * steps[d] for d in range(t.ndim)]
        new_shape = tuple(sizes[d] for d in range(t.ndim) if keep[d])
        new_strides = tuple(strides[d] for d in range(t.ndim) if keep[d])
        rtype = memref(new_shape, t.dtype, t.buffer, strides=new_strides, offset=offset)
        op = self._view(memref_d.SubviewOp, t.value, dyn, static_offsets, sizes, steps, rtype)
        return Tensor(op.results[0], new_shape, t.dtype, t.buffer, new_strides, offset, self.block,
                      t.name, is_base=False, storage=t.storage_shape,
                      dyn_offset=None if offset is not None else total)

    def reinterpret(self, t: Tensor, shape: Sequence[int], strides: Sequence[int],
                    offset: Index | int) -> Tensor:
        """``memref.reinterpret_cast`` of ``t``'s storage: ``shape`` / ``strides`` / ``offset``
        in elements from the start of the underlying buffer (not of ``t``'s view), so any
        strided pattern over the same storage (permute, stride-0 broadcast, reshape, ap)."""
        offset = simplify(offset)
        dyn = [self.materialize(offset)] if isinstance(offset, Index) else []
        static = None if dyn else int(offset)
        rtype = memref(tuple(shape), t.dtype, t.buffer, strides=tuple(strides), offset=static)
        op = self._view(memref_d.ReinterpretCastOp, t.value, dyn, [DYNAMIC_INDEX if dyn else static],
                        shape, strides, rtype)
        return Tensor(op.results[0], tuple(shape), t.dtype, t.buffer, tuple(strides), static,
                      self.block, t.name, is_base=False, storage=t.storage_shape,
                      dyn_offset=offset if dyn else None)

    def _view(self, cls: type[Operation], source: SSAValue, dyn: Sequence[SSAValue],
              static_offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
              rtype: Attribute) -> Operation:
        """:func:`view_op` emitted at the end of the insertion block (no verifier run: its
        lists and type come from the same numbers, module docstring) -- or the same view op
        that block already holds from the same source location.  A view is a pure function
        of its operands, lists and type, and an op earlier in the block dominates every later
        use, so the op is shared instead of repeated; the location in the key keeps every
        diagnostic where it was.  (A kernel that re-derives a tile's view in an unrolled loop
        or a helper makes the same op over and over: 41 k of the 237 k ops of an nki-library
        attention instance.)  An op erased since (a call or loop traced again) is not reused."""
        key = (cls, source, tuple(dyn), tuple(static_offsets), tuple(sizes), tuple(strides),
               id(rtype), self.loc, self.block)     # (the op keeps rtype alive: its id stays its)
        hit = self._views.get(key)
        if hit is not None and hit.parent is self.block:
            return hit
        op = self._views[key] = view_op(cls, source, dyn, static_offsets, sizes, strides, rtype)
        return self.emit(op, verify=False)

    def view_dtype(self, t: Tensor, dtype, shape: Sequence[int], strides: Sequence[int],
                   offset: Index | int, storage: Sequence[int]) -> Tensor:
        """``nki.view_dtype``: ``t``'s bytes as ``dtype`` (layout already rescaled by the caller)."""
        from ..dialects.views import NkiViewDtypeOp
        offset = simplify(offset)
        static = None if isinstance(offset, Index) else int(offset)
        rtype = memref(tuple(shape), dtype, t.buffer, strides=tuple(strides), offset=static)
        op = self.emit(NkiViewDtypeOp.create(operands=[t.value], result_types=[rtype]))
        return Tensor(op.results[0], tuple(shape), dtype, t.buffer, tuple(strides), static,
                      self.block, t.name, is_base=False, storage=tuple(storage),
                      dyn_offset=offset if static is None else None)
