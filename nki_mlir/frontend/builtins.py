"""Markers for the NKI API names (``nl.*``, ``nisa.*``) that the frontend compiles.

A traced kernel calls them: :func:`Builtin.__call__` hands the call to the tracer
(:func:`.context.tracer`), which
runs the handler registered for the name with :func:`handles`.  Calling a builtin from
plain Python (outside ``@nki.jit``) is an error, as in NKI
(``err_nki_api_outside_of_nki_kernel``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import NKIError
from .context import _ACTIVE, _TRACER, tracer

#: name ("nl.ndarray", "nisa.dma_copy") -> handler(trace context, *args, **kwargs)
HANDLERS: dict[str, Callable[..., Any]] = {}


class Builtin:
    """An NKI API function or op token.

    Attributes:
        name: qualified API name, e.g. ``"nl.add"``.
        token: the ALU / activation token it stands for when passed as ``op=`` (e.g.
            ``"add"``), or None for plain functions.
    """

    def __init__(self, name: str, token: str | None = None, doc: str = ""):
        self.name = name
        self.token = token
        self.__doc__ = doc or f"NKI API ``{name}`` (compiled by nki-mlir's frontend)."
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = self.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _ACTIVE:     # (context.active() and tracer(), inlined: one call per API call)
            raise NKIError(f"{self.name}() can only be called inside an @nki.jit kernel",
                           category="API misuse", code="err_nki_api_outside_of_nki_kernel")
        return (_TRACER[0] if _TRACER else tracer()).dispatch(self.name, args, kwargs)

    @property
    def __signature__(self):
        """The API's signature: its handler's, without the handler's ``cg`` parameter."""
        import inspect
        handler = HANDLERS.get(self.name)
        if handler is None:
            raise ValueError(f"{self.name} has no handler")
        sig = inspect.signature(handler)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    def __repr__(self) -> str:
        return f"<nki builtin {self.name}>"

    def __reduce__(self):  # builtins are identified by name (stable cache keys)
        return (Builtin, (self.name, self.token))


def handles(*names: str):
    """Register the decorated function as the frontend handler of the given API names."""

    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn

    return deco


class Enum:
    """A small NKI enum namespace (``nisa.reduce_cmd.reset_reduce``) with string members."""

    #: every enum by name (``"dge_mode"``), for looking members up by value
    ALL: dict[str, "Enum"] = {}

    def __init__(self, name: str, members: dict[str, int]):
        self._name = name
        self._by_value: dict[int, EnumMember] = {}
        for m, v in members.items():
            setattr(self, m, EnumMember(name, m, v))
            self._by_value.setdefault(v, getattr(self, m))
        Enum.ALL[name] = self

    def member(self, value: int) -> "EnumMember | None":
        """The member with integer ``value`` (the first one declared), or None."""
        return self._by_value.get(value)

    def __repr__(self) -> str:
        return f"<nki enum {self._name}>"


class EnumMember:
    """One member of an NKI enum, e.g. ``nisa.engine.vector`` (name ``vector``, value 5)."""

    def __init__(self, enum: str, name: str, value: int):
        self.enum, self.name, self.value = enum, name, value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EnumMember) and (self.enum, self.name) == (other.enum, other.name)

    def __hash__(self) -> int:
        return hash((self.enum, self.name))

    #: enums whose members are ordered by value: real kernels test the target with
    #: ``nisa.get_nc_version() >= nisa.nc_version.gen3`` (or ``>= 3``)
    ORDERED = frozenset({"nc_version"})

    def _rank(self, other: object) -> tuple[int, int] | None:
        if self.enum not in self.ORDERED:
            return None
        if isinstance(other, EnumMember) and other.enum == self.enum:
            return self.value, other.value
        if isinstance(other, int) and not isinstance(other, bool):
            return self.value, other
        return None

    def __lt__(self, other: object) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] < r[1]

    def __le__(self, other: object) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] <= r[1]

    def __gt__(self, other: object) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] > r[1]

    def __ge__(self, other: object) -> bool:
        r = self._rank(other)
        return NotImplemented if r is None else r[0] >= r[1]

    def __repr__(self) -> str:
        return f"{self.enum}.{self.name}"
