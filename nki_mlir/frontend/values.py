"""Values the frontend manipulates while specialising a kernel.

Compile-time Python values (ints, floats, tuples, dtypes, ...) are plain Python objects.
Run-time values are:

- :class:`Tensor`: an SSA ``memref`` value plus what the frontend knows statically about
  it (shape, dtype, memory, strides in elements, offset in elements or None if it depends
  on a loop index, and the IR block it was defined in).
- :class:`Index`: an integer that depends on loop induction variables, kept as an affine
  expression ``const + sum(coeff * symbol)`` over SSA ``index`` values so slice sizes such
  as ``(i + 1) * 128 - i * 128`` fold to constants.  Non-affine arithmetic materialises
  ``arith`` ops and continues with the result as a new symbol.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np
from xdsl.ir import Block, SSAValue


@dataclass(frozen=True)
class Tensor:
    """A tensor view inside the kernel (shapes in elements, strides/offset in elements)."""

    value: SSAValue
    shape: tuple[int, ...]
    dtype: np.dtype
    buffer: str  # "sbuf" | "psum" | "hbm" | "private_hbm" | "shared_hbm"
    strides: tuple[int, ...]
    offset: int | None
    block: Block | None
    name: str = ""
    is_base: bool = True
    #: shape of the underlying storage in elements of ``dtype`` (None: this tensor's own
    #: shape, i.e. a base buffer); ``ap()`` patterns and ``get_pattern()`` refer to it
    storage: tuple[int, ...] | None = None
    #: the element offset as an affine expression when ``offset`` is None (loop-dependent)
    dyn_offset: "Index | None" = None
    #: set on an indirect (gather / scatter) view, usable only by ``nisa.dma_copy``
    indirect: "Indirect | None" = None
    #: Beta 1 block dims (beta1/block_dims.py): one ``(blocks, slots)`` pair per dim left of
    #: ``nl.par_dim``; the storage keeps the slots as free dims 1..n (``shape`` is that
    #: physical order, partition first)
    blocks: tuple[tuple[int, int], ...] = ()
    #: set on an ``ap(...)`` view whose pattern leaves its storage: the located error, raised
    #: when the view is used (made and never used is not an error, as in Python)
    poison: Any = None

    @property
    def user_shape(self) -> tuple[int, ...]:
        """The shape the kernel sees: block dims first (``shape`` for a tensor without)."""
        if not self.blocks:
            return self.shape
        n = len(self.blocks)
        return tuple(b for b, _ in self.blocks) + self.shape[:1] + self.shape[1 + n:]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def on_chip(self) -> bool:
        return self.buffer in ("sbuf", "psum")

    @property
    def storage_shape(self) -> tuple[int, ...]:
        return self.storage if self.storage is not None else self.shape

    @property
    def offset_index(self) -> "Index | int":
        """The element offset into the storage: an int, or an :class:`Index` if loop-dependent."""
        if self.offset is not None:
            return self.offset
        assert self.dyn_offset is not None, "a dynamic-offset view without its offset expression"
        return self.dyn_offset

    def describe(self) -> str:
        from ..dtypes import name_of
        return f"{self.name or 'tensor'} {list(self.shape)} {name_of(self.dtype)} in {self.buffer}"


@dataclass(frozen=True)
class Indirect:
    """What makes a view indirect (nki.language API reference (nki/api/nki/language), ``ap(vector_offset=...)`` /
    ``vector_select``): row ``i`` of the view is row ``index[i]`` of ``table``.

    Attributes:
        index: the ``[P, 1]`` int32/uint32 SBUF tensor of row numbers.
        table: the indexed tensor, ``[rows, *rest]``; dim 0 is the indirect dim, ``rows``
            the number of valid row numbers (``index`` values outside ``[0, rows)`` are out
            of bounds and follow ``oob_mode``).
    """

    index: "Tensor"
    table: "Tensor"


@dataclass(frozen=True)
class TensorMethod:
    """A tensor method looked up but not yet called (``t.slice``); the call dispatches to
    the frontend handler registered as ``"tensor.<name>"``."""

    name: str
    tensor: Tensor


@dataclass(frozen=True)
class DynSlice:
    """``nl.ds(start, size)``: ``size`` elements from ``start`` (an int or an :class:`Index`)."""

    start: "int | Index"
    size: int


@dataclass(frozen=True)
class LoopRange:
    """``nl.affine_range`` / ``nl.sequential_range``: an IR loop, not unrolled."""

    kind: str  # "affine" | "sequential"
    start: int
    stop: int
    step: int

    def __iter__(self):
        """Plain Python iteration (a loop the tracer does not see, e.g. in a helper module)."""
        return iter(range(self.start, self.stop, self.step))

    def __len__(self) -> int:
        return len(range(self.start, self.stop, self.step))


@dataclass(frozen=True)
class Index:
    """An affine index expression ``const + sum(coeff * sym)`` over SSA ``index`` values."""

    terms: tuple[tuple[SSAValue, int], ...] = field(default=())
    const: int = 0

    @staticmethod
    def of(sym: SSAValue) -> "Index":
        return Index(((sym, 1),), 0)

    # -------------------------------------------------------------- affine algebra
    def _merge(self, other: "Index", sign: int) -> "Index":
        if not self.terms and not other.terms:     # int constants: the shared constant Index
            v = self.const + sign * other.const
            if type(v) is int:
                return as_index(v)
        acc: dict[SSAValue, int] = dict(self.terms)
        for s, c in other.terms:
            acc[s] = acc.get(s, 0) + sign * c
        terms = tuple((s, c) for s, c in acc.items() if c != 0)
        return Index(terms, self.const + sign * other.const)

    def add(self, other: "Index | int") -> "Index":
        return self._merge(as_index(other), 1)

    def sub(self, other: "Index | int") -> "Index":
        return self._merge(as_index(other), -1)

    def scale(self, k: int) -> "Index":
        if k == 0:
            return as_index(0)
        if not self.terms and type(v := self.const * k) is int:   # the shared constant Index
            return as_index(v)
        return Index(tuple((s, c * k) for s, c in self.terms), self.const * k)

    def floordiv_exact(self, k: int) -> "Index | None":
        """``self // k`` when every coefficient and the constant divide by ``k``, else None."""
        if k != 0 and self.const % k == 0 and all(c % k == 0 for _, c in self.terms):
            return Index(tuple((s, c // k) for s, c in self.terms), self.const // k)
        return None

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __repr__(self) -> str:
        parts = [f"{c}*%{getattr(s, 'name_hint', None) or '?'}" for s, c in self.terms]
        return "Index(" + " + ".join(parts + [str(self.const)]) + ")"


def _dict_init(cls: type) -> type:
    """Give the frozen dataclass ``cls`` an ``__init__`` with the generated one's signature
    and defaults that stores the fields straight into the instance ``__dict__`` (the
    generated one calls ``object.__setattr__`` per field, to get past the frozen
    ``__setattr__``): the same instance state, ~3x faster for :class:`Tensor`, of which a
    large traced kernel makes ~10^5.  Equality, hashing, ``repr`` and
    ``dataclasses.replace`` are the dataclass's own."""
    params, body, scope = [], [], {}
    for f in fields(cls):
        assert f.init and f.default_factory is MISSING and not hasattr(cls, "__post_init__"), \
            f"internal error: _dict_init cannot build {cls.__name__}.{f.name}"
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    d[{f.name!r}] = {f.name}")
    exec(f"def __init__(self, {', '.join(params)}):\n    d = self.__dict__\n" + "\n".join(body),
         scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init
    return cls


_dict_init(Tensor)
_dict_init(Index)


def as_index(x: "Index | int") -> Index:
    if isinstance(x, Index):
        return x
    c = int(x)
    hit = _CONST_INDEX.get(c)
    if hit is None:     # (an Index is immutable: one shared object per constant)
        if len(_CONST_INDEX) >= 1 << 16:
            _CONST_INDEX.clear()
        hit = _CONST_INDEX[c] = Index((), c)
    return hit


#: constant -> its symbol-free Index (the usual argument of the affine algebra)
_CONST_INDEX: dict[int, "Index"] = {}


def simplify(x: "Index | int") -> "Index | int":
    """An :class:`Index` with no symbols becomes a plain int."""
    if isinstance(x, Index) and x.is_const:
        return x.const
    return x


def is_int(x: object) -> bool:
    if type(x) is int:      # the usual case, first
        return True
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)
