"""The kernel tensor annotations of ``nki.typing`` (``nt.tensor[...]``, ``nt.mutable_tensor``,
``nt.scalar``, ``nt.mutable`` / ``nt.immutable``): defined here, below the public API, for the
frontend's checks (:mod:`.kernel_checks`); :mod:`nki_mlir.typing` documents and exports them."""
from __future__ import annotations

from typing import Any

__all__ = ["tensor", "mutable_tensor", "scalar", "mutable", "immutable", "TensorAnnotation",
           "ScalarAnnotation", "annotation_of"]


class _Mutability:
    """``nt.mutable`` / ``nt.immutable``: a mutability marker used inside ``nt.tensor[...]``."""

    def __init__(self, name: str, mutable: bool):
        self.name, self.mutable = name, mutable

    def __repr__(self) -> str:
        return f"nt.{self.name}"


mutable = _Mutability("mutable", True)
immutable = _Mutability("immutable", False)


class TensorAnnotation:
    """``nt.tensor`` / ``nt.mutable_tensor``, optionally subscripted with a shape and dtype.

    Attributes:
        shape: the expected shape (tuple of ints), or None for any shape.
        dtype: the expected dtype (NumPy dtype), or None for any dtype.
        mutable: True if the kernel may write the parameter (``nt.mutable_tensor``).
    """

    def __init__(self, mutable: bool = False, shape: tuple[int, ...] | None = None, dtype=None):
        self.mutable, self.shape, self.dtype = mutable, shape, dtype

    def __getitem__(self, key: Any) -> "TensorAnnotation":
        items = list(key) if isinstance(key, tuple) else [key]
        mut = self.mutable
        dims: list[Any] = []
        dtype = self.dtype
        for i, k in enumerate(items):
            if isinstance(k, _Mutability):
                mut = k.mutable
            elif isinstance(k, (list, tuple)) and i == 0:
                dims.extend(k)
            elif _is_dim(k):
                dims.append(k)
            else:
                dtype = _as_dtype(k)
        shape = tuple(int(d) for d in dims) if dims else self.shape
        return TensorAnnotation(mut, shape, dtype)

    @property
    def ndim(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TensorAnnotation) and (self.mutable, self.shape, self.dtype)
                == (other.mutable, other.shape, other.dtype))

    def __hash__(self) -> int:
        return hash((self.mutable, self.shape, str(self.dtype)))

    def __repr__(self) -> str:
        parts = [] if self.shape is None else [str(list(self.shape))]
        if self.dtype is not None:
            from ..dtypes import name_of
            parts.append(name_of(self.dtype))
        name = "nt.mutable_tensor" if self.mutable else "nt.tensor"
        return name + (f"[{', '.join(parts)}]" if parts else "")


class ScalarAnnotation:
    """``nt.scalar``: a compile-time scalar kernel argument (not checked)."""

    mutable = False
    shape = None
    dtype = None

    def __getitem__(self, key: Any) -> "ScalarAnnotation":
        return self

    def __repr__(self) -> str:
        return "nt.scalar"


tensor = TensorAnnotation(False)
mutable_tensor = TensorAnnotation(True)
scalar = ScalarAnnotation()


def _is_dim(k: Any) -> bool:
    import numpy as np
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)


def _as_dtype(k: Any):
    from ..dtypes import as_dtype
    from ..errors import NKITypeError
    try:
        return as_dtype(k)
    except NKITypeError:
        raise TypeError(f"nt.tensor[...]: {k!r} is neither a dimension (int) nor an NKI dtype") from None


def annotation_of(value: Any) -> TensorAnnotation | ScalarAnnotation | None:
    """``value`` as an ``nt`` annotation, or None if it is not one (e.g. ``int``, a string
    that is not an ``nt`` expression)."""
    if isinstance(value, (TensorAnnotation, ScalarAnnotation)):
        return value
    if isinstance(value, _Mutability):
        return TensorAnnotation(value.mutable)
    return None
