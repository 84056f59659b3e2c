"""``neuronxcc.nki.language`` (Beta 1 ``nl``): the 0.3+ names plus the Beta 1-only ones.

Beta 1-only: ``arange``, ``mgrid``, ``par_dim``, ``static_cast``, ``loop_reduce``,
``atomic_rmw``, ``nc``, ``spmd_dim`` (NKI language guide (nki/get-started/nki-language-guide), Beta 1 rows).
The shared functions accept Beta 1's ``mask=`` keyword.
"""
from __future__ import annotations

from ..frontend.builtins import Builtin as _B
from ..language import *  # noqa: F401,F403
from ..language import _buffer_by_name  # noqa: F401

_BETA1_FUNCS = ["arange", "par_dim", "static_cast", "loop_reduce", "atomic_rmw"]
for _name in _BETA1_FUNCS:
    globals()[_name] = _B(f"nl.{_name}")
del _name

# launch-grid markers, used outside kernels: kernel[nl.nc(2), 4] (frontend/spmd.py)
from ..frontend.spmd import nc, spmd_dim  # noqa: E402,F401


class _MGrid:
    """``nl.mgrid[0:P, 0:F]``: an index grid whose ``.p`` / ``.x`` fields are index
    expressions (compiled by the frontend: ``nl.mgrid`` is only usable in a kernel)."""

    name = "nl.mgrid"

    def __getitem__(self, key):  # in a traced kernel
        from ..frontend.beta1.trace import grid_subscript
        return grid_subscript(self, key)

    def __repr__(self) -> str:
        return "<nki builtin nl.mgrid>"


mgrid = _MGrid()


def finfo(dtype):
    """``nl.finfo(dtype)``: machine limits of a float dtype (``.max``, ``.min``, ``.eps``,
    ``.tiny``, ``.bits``), like ``numpy.finfo`` and including bfloat16 / fp8 (``ml_dtypes.finfo``).
    A compile-time value, usable inside and outside kernels.

    Raises:
        NKITypeError: ``dtype`` is not an NKI float dtype.
    """
    import ml_dtypes

    from .. import dtypes
    from ..errors import NKITypeError
    dt = dtypes.as_dtype(dtype)
    if not dtypes.is_float(dt):
        raise NKITypeError(f"nl.finfo: {dtype!r} is not a float dtype")
    return ml_dtypes.finfo(dt)


#: ``nl.fp32`` (Beta 1): the limits of float32 (``nl.fp32.min`` is the usual masked-out value)
fp32 = finfo("float32")

__all__ = [n for n in dir() if not n.startswith("_")]
