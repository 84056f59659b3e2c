"""The objects a traced kernel's Python sees in place of run-time values.

- :class:`NkiTensor` (public as ``nl.NkiTensor``): a tensor or view.  Attributes are
  compile-time facts (``shape``, ``dtype``, ``buffer``, ...); subscripts, methods and
  operators emit ``nki`` ops through the tracer.  ``int()``, iteration and the like need
  data that exists only on the device: each is a located ``NKIError``.  Its truth value is
  Python's default for an object (always true; ``if t:`` on an optional tensor argument
  means ``t is not None``), as for AWS's ``NkiTensor``, which defines no ``__bool__``;
  in a Beta 1 kernel (tile operators) branching on a tile is an error.
- :class:`LoopIndex`: the symbolic index of a loop the tracer keeps rolled.  ``+ - * // %``
  with ints build index arithmetic.  Anything that needs its value as a Python object
  (``int()``, ``bool()`` of a comparison, ``__index__``, a dict key, an f-string) tells the
  tracer that this loop must be unrolled to keep Python's semantics.
- :class:`LoopCondition`: ``i < n`` on a loop index; usable as a whole-instruction
  ``mask=``, and as a Python truth value only by unrolling the loop.

Semantics: NKI ``nki.language.NkiTensor`` (AWS's API stubs); loops are Python loops
(``nl.affine_range`` is "an alias for Python's range()").
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Any

import numpy as np


def _tracer():
    global _TRACER_OF
    if _TRACER_OF is None:      # imported once, on first use (context imports this module)
        from .context import tracer
        _TRACER_OF = tracer
    return _TRACER_OF()


_TRACER_OF = None


def _buffer_by_name(name: str):
    global _BUFFER_BY_NAME
    if _BUFFER_BY_NAME is None:  # imported once, on first use
        from .buffers import buffer_by_name
        _BUFFER_BY_NAME = buffer_by_name
    return _BUFFER_BY_NAME(name)


_BUFFER_BY_NAME = None


#: Python operator name -> the ``ast`` operator class the frontend's operator helpers take
AST_OPS = {
    "add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "truediv": ast.Div, "floordiv": ast.FloorDiv,
    "mod": ast.Mod, "pow": ast.Pow, "matmul": ast.MatMult, "and": ast.BitAnd, "or": ast.BitOr,
    "xor": ast.BitXor, "lshift": ast.LShift, "rshift": ast.RShift, "lt": ast.Lt, "le": ast.LtE,
    "gt": ast.Gt, "ge": ast.GtE, "eq": ast.Eq, "ne": ast.NotEq,
}


def with_operators(impl: str, forward: tuple[str, ...], reflected: tuple[str, ...] = ()):
    """Class decorator: ``__<op>__(self, other)`` calls ``self.<impl>(op, other)`` for each op
    in ``forward`` and ``__r<op>__`` calls ``self.<impl>(op, other, True)`` for ``reflected``
    (the operator tables of the traced values, written once)."""
    def forward_method(op: str):
        return lambda self, other: getattr(self, impl)(op, other)

    def reflected_method(op: str):
        return lambda self, other: getattr(self, impl)(op, other, True)

    def deco(cls):
        for op in forward:
            setattr(cls, f"__{op}__", forward_method(op))
        for op in reflected:
            setattr(cls, f"__r{op}__", reflected_method(op))
        return cls
    return deco


@with_operators("_op", ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                       "and", "or", "xor", "lshift", "rshift", "lt", "le", "gt", "ge"),
                ("add", "sub", "mul", "truediv", "and", "or"))
class NkiTensor:
    """A tensor (or a view of one) inside a traced kernel.

    Attributes:
        shape: dims in elements.
        dtype: element dtype (a NumPy / ml_dtypes dtype).
        buffer: ``nl.sbuf``, ``nl.psum``, ``nl.hbm`` or ``nl.shared_hbm``.
        strides, offset: element strides of the view and its element offset into the
            storage (``offset`` is None when it depends on a loop index).
        name: the variable or ``name=`` the tensor was created with.

    Truth value: always true, Python's default for an object (``if bias:`` tests that an
    optional tensor argument was given), as AWS's ``NkiTensor`` defines no ``__bool__``.

    Raises:
        NKIError: when used as a Python value (``int``, ``float``, iteration, ``len``;
            in a Beta 1 kernel also a truth value); only tensor operations are allowed.
    """

    __slots__ = ("_t",)

    def __init__(self, *args: Any, **kwargs: Any):
        from ..errors import NKIError
        raise NKIError("NkiTensor(...) binds existing device storage; inside a kernel create "
                       "tensors with nl.ndarray(shape, dtype, buffer=...)", category="API misuse")

    @classmethod
    def _of(cls, t) -> "NkiTensor":
        p = object.__new__(cls)
        object.__setattr__(p, "_t", t)
        return p

    # ------------------------------------------------------------ compile-time facts
    shape = property(lambda self: self._t.user_shape)
    dtype = property(lambda self: self._t.dtype)
    ndim = property(lambda self: len(self._t.user_shape))
    size = property(lambda self: math.prod(self._t.user_shape))
    strides = property(lambda self: self._t.strides)
    offset = property(lambda self: self._t.offset)
    name = property(lambda self: self._t.name)

    @property
    def buffer(self):
        return _buffer_by_name(self._t.buffer)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _tracer().tensor_method(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        from ..errors import NKITypeError
        raise NKITypeError(f"tensor attributes are read-only (cannot set '{name}')")

    # ------------------------------------------------------------------- views
    def __getitem__(self, key: Any) -> "NkiTensor":
        return _tracer().subscript(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _tracer().store_subscript(self, key, value)

    # -------------------------------------------------- Beta 1 tile operators
    def _op(self, op: str, other: Any, reflected: bool = False) -> Any:
        a, b = (other, self) if reflected else (self, other)
        return _tracer().operator(op, a, b)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if other is None or not _comparable(other):
            return NotImplemented
        return self._op("eq", other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if other is None or not _comparable(other):
            return NotImplemented
        return self._op("ne", other)

    __hash__ = object.__hash__

    def __iadd__(self, other: Any) -> Any:
        return _tracer().inplace_add(self, other)

    def __neg__(self) -> Any:
        return _tracer().unary("neg", self)

    def __pos__(self) -> Any:
        return self

    def __invert__(self) -> Any:
        return _tracer().unary("invert", self)

    # ------------------------------------------------ no Python value on the host
    def __bool__(self) -> bool:
        return _tracer().tensor_truth(self)

    def __index__(self) -> int:
        _tracer().tensor_as_value(self, "a Python int (an index, a size, range())")

    __int__ = __index__

    def __float__(self) -> float:
        _tracer().tensor_as_value(self, "a Python float")

    def __iter__(self):
        _tracer().tensor_as_value(self, "an iterable (loop over nl.affine_range(n) and index "
                                        "the tensor instead)")

    def __len__(self) -> int:
        _tracer().tensor_as_value(self, "len() (use t.shape[0])")

    def __copy__(self) -> "NkiTensor":
        return self

    def __deepcopy__(self, memo: dict) -> "NkiTensor":
        return self

    def __repr__(self) -> str:
        return f"<NkiTensor {self._t.describe()}>"


def _comparable(other: Any) -> bool:
    """A value a tensor's ``==`` / ``!=`` compares with: a tensor, a number, a loop index, or a
    value whose class says ``traced_operand = True`` (the Beta 1 index expressions)."""
    import numpy as np
    return (isinstance(other, (NkiTensor, int, float, np.number, LoopIndex))
            or getattr(type(other), "traced_operand", False))


@with_operators("_arith", ("add", "sub", "mul", "floordiv", "mod"),
                ("add", "sub", "mul", "floordiv", "mod"))
@with_operators("_cmp", ("lt", "le", "gt", "ge"))
class LoopIndex:
    """The symbolic index of a rolled loop (an affine expression over loop variables).

    Attributes:
        keys: the source keys (``file:line:col``) of the loops it depends on; the tracer
            unrolls those loops if the value is needed as a Python object.
    """

    __slots__ = ("_i", "keys")

    def __init__(self, index, keys: frozenset):
        object.__setattr__(self, "_i", index)
        object.__setattr__(self, "keys", keys)

    def _arith(self, op: str, other: Any, reflected: bool = False) -> Any:
        a, b = (other, self) if reflected else (self, other)
        return _tracer().index_arith(op, a, b)

    def __divmod__(self, other: Any) -> Any:
        return self // other, self % other

    def __rdivmod__(self, other: Any) -> Any:
        return other // self, other % self

    def __neg__(self) -> Any:
        return _tracer().index_arith("mul", self, -1)

    def __pos__(self) -> "LoopIndex":
        return self

    def _cmp(self, op: str, other: Any) -> Any:
        return _tracer().index_compare(op, self, other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._cmp("eq", other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._cmp("ne", other)

    # ------------------------------------------------ uses that need a Python value
    def __index__(self) -> int:
        _tracer().concretize(self, "used as a Python int (range(), an index into a list, int())")

    __int__ = __index__

    def __bool__(self) -> bool:
        _tracer().concretize(self, "used as a truth value")

    def __float__(self) -> float:
        _tracer().concretize(self, "used as a Python float")

    def __hash__(self) -> int:
        _tracer().concretize(self, "used as a dict key or set member")

    def __str__(self) -> str:
        _tracer().concretize(self, "formatted as a string")

    def __format__(self, spec: str) -> str:
        _tracer().concretize(self, "formatted as a string")

    def __iter__(self):
        _tracer().concretize(self, "iterated over")

    def __truediv__(self, other: Any) -> Any:
        _tracer().concretize(self, "divided with '/' (a Python float)")

    __rtruediv__ = __truediv__

    def __pow__(self, other: Any) -> Any:
        _tracer().concretize(self, "raised to a power")

    def __repr__(self) -> str:
        return f"<loop index {self._i!r}>"


class LoopCondition:
    """``i < n`` (or ``<= > >= == !=``) on a loop index.

    Passed as ``mask=`` it predicates a whole instruction (Beta 1); its Python truth value
    (``if i < n``, ``min``/``max``) is known only per iteration, so using it unrolls the loop
    -- unless it is the same in every iteration (:mod:`.index_bounds`).
    """

    __slots__ = ("mask", "index", "what")

    def __init__(self, mask, index: LoopIndex, what: str):
        self.mask, self.index, self.what = mask, index, what

    def __bool__(self) -> bool:
        from .index_bounds import uniform_truth
        known = uniform_truth(self.mask)    # the same in every iteration: no unrolling
        if known is not None:
            return known
        _tracer().concretize(self.index, f"compared in a Python condition ({self.what})")

    def __and__(self, other: Any) -> Any:
        if isinstance(other, LoopCondition):
            return LoopCondition(self.mask & other.mask,
                                 LoopIndex(self.index._i, self.index.keys | other.index.keys),
                                 f"{self.what} & {other.what}")
        if isinstance(other, (bool, np.bool_)):  # a compile-time flag: `(i < n) & use_mask`
            return self if other else False
        return NotImplemented

    __rand__ = __and__

    def __repr__(self) -> str:
        return f"<loop condition {self.what}>"


OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
    "matmul": operator.matmul, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
}
