"""Frontend handlers for the ``nl`` tensor creation functions with an initial value:
``nl.zeros``, ``nl.full``, ``nl.ones``, ``nl.zeros_like`` (and ``nl.empty_like``).

Semantics: the ``nki.language`` API pages (AWS's stubs, ``nki/api/nki/language``): a new
tile of ``shape`` / ``dtype`` on ``buffer`` holding the fill value.  Beta 1 spells an
extra ``lazy_initialization=`` keyword (``neuronxcc.nki.language``; used by NKI samples on
``nl.zeros`` / ``nl.full`` accumulators): a hint that lets the compiler defer or fold the
initialization (True) or asks for it where the tensor is created (False).  The contents are
the fill value either way, so nki-mlir checks it is a bool and compiles both the same way;
Beta 2 has no such keyword.
"""
from __future__ import annotations

from .. import dtypes
from ..dialects import nki, nki_sugar as S
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .lang_calls import _buffer, _dtype, _shape, new_tensor
from .lang_math import _NUMBER, _err, _on_chip_buffer, _out_dtype, _result
from .values import Tensor


def _lazy_initialization(cg, api: str, v) -> None:
    """Check Beta 1's ``lazy_initialization=`` hint (see the module docstring)."""
    if v is None:
        return
    if not cg.b.beta1:
        raise cg.b.error(f"{api}(): got an unexpected keyword argument 'lazy_initialization' (a "
                         f"Beta 1 keyword, neuronxcc.nki.language only)", NKITypeError)
    if not isinstance(v, bool):
        raise cg.b.error(f"{api}: lazy_initialization must be True or False, got {v!r}",
                         NKITypeError)


@handles("nl.zeros")
def zeros(cg, shape, dtype, buffer=None, name="", lazy_initialization=None):
    api = "nl.zeros"
    _lazy_initialization(cg, api, lazy_initialization)
    shape, dt, buf = _shape(cg, api, shape), _dtype(cg, api, dtype), _buffer(cg, api, buffer)
    return new_tensor(cg, nki.ZerosOp, shape, dt, buf, name)


def _full(cg, api: str, shape, fill_value, dtype, buffer, name) -> Tensor:
    shape, dt = _shape(cg, api, shape), _dtype(cg, api, dtype)
    buf = _on_chip_buffer(cg, api, buffer)
    if not isinstance(fill_value, _NUMBER):
        raise _err(cg, f"{api}: fill_value must be a compile-time number, got {A._show(fill_value)}")
    if dtypes.is_int(dt) and dt != dtypes.bool_:
        if float(fill_value) != int(fill_value):
            raise _err(cg, f"{api}: fill_value {fill_value!r} is not an integer but dtype is "
                           f"{dtypes.name_of(dt)}")
        value = cg.b.const_scalar(int(fill_value), dt)
    else:
        value = cg.b.const_scalar(float(fill_value))
    t = _result(cg, S.FullOp, {"value": value}, {"name": name or None}, shape, dt, buf)
    return t


@handles("nl.full")
def full(cg, shape, fill_value, dtype, buffer=None, name="", lazy_initialization=None):
    _lazy_initialization(cg, "nl.full", lazy_initialization)
    return _full(cg, "nl.full", shape, fill_value, dtype, buffer, name)


@handles("nl.ones")
def ones(cg, shape, dtype, buffer=None, name="", lazy_initialization=None):
    _lazy_initialization(cg, "nl.ones", lazy_initialization)
    return _full(cg, "nl.ones", shape, 1, dtype, buffer, name)


@handles("nl.zeros_like")
def zeros_like(cg, x, dtype=None, buffer=None, name="", lazy_initialization=None):
    api = "nl.zeros_like"
    _lazy_initialization(cg, api, lazy_initialization)
    t = A.tensor(cg, api, "x", x)
    dt = _out_dtype(cg, api, dtype, t)
    return new_tensor(cg, nki.ZerosOp, t.shape, dt, _on_chip_buffer(cg, api, buffer), name)


@handles("nl.empty_like")
def empty_like(cg, x, dtype=None, buffer=None, name=""):
    api = "nl.empty_like"
    t = A.tensor(cg, api, "x", x)
    return new_tensor(cg, nki.NdarrayOp, t.shape, _out_dtype(cg, api, dtype, t),
                      _buffer(cg, api, buffer), name)
