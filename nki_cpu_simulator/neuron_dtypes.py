"""Stand-in for AWS's ``neuron_dtypes`` package (not on PyPI), implemented with ml_dtypes.

The nki-library test suite imports ``neuron_dtypes`` to make test inputs in low-precision
dtypes.  This module implements the subset it uses, on NumPy + ml_dtypes and nki-mlir's
dtypes (:mod:`nki_mlir.dtypes`):

- the dtypes ``bfloat16``, ``float16``, ``float32``, ``float8_e4m3``, ``float8_e4m3fn``,
  ``float8_e5m2``, ``float8_e8m0fnu``, ``float4_e2m1fn`` and the packed MX dtypes
  ``float8_e4m3fn_x4``, ``float8_e5m2_x4``, ``float4_e2m1fn_x4`` (nki-mlir's ``nl.*_x4``
  objects);
- ``static_cast(array, dtype)``: ``array`` converted to ``dtype`` with NumPy / ml_dtypes
  semantics (floats round to nearest even; no saturation beyond what ml_dtypes does;
  integers by ``astype``).  Packed ``*_x4`` targets raise :class:`NotImplementedError`
  (packing needs MX quantisation: use ``nki.isa.quantize_mx`` / the suite's mx helpers);
- ``is_float_type(dtype)``, ``sizeinbytes(dtype)`` and ``finfo(dtype)`` (ml_dtypes.finfo);
- any other attribute: :class:`AttributeError` naming the gap.

It is registered as ``neuron_dtypes`` only when the real package is not installed, by the
pytest plugin :mod:`nki_cpu_simulator.stubs` (``pytest -p nki_cpu_simulator.stubs``).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from nki_mlir import dtypes as _d

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
float4_e2m1fn = np.dtype(ml_dtypes.float4_e2m1fn)
float8_e4m3fn_x4 = _d.float8_e4m3fn_x4
float8_e5m2_x4 = _d.float8_e5m2_x4
float4_e2m1fn_x4 = _d.float4_e2m1fn_x4

_X4 = (float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4)


def _as_dtype(dtype: Any) -> np.dtype:
    return dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)


def static_cast(array: Any, dtype: Any) -> np.ndarray:
    """``array`` converted to ``dtype`` (NumPy / ml_dtypes ``astype``; floats round to nearest even).

    Raises:
        NotImplementedError: ``dtype`` is a packed MX ``*_x4`` dtype.
    """
    dt = _as_dtype(dtype)
    if any(dt == x for x in _X4):
        raise NotImplementedError(f"neuron_dtypes.static_cast to the packed MX dtype {dt} is not "
                                  f"implemented by nki-mlir's neuron_dtypes stand-in")
    return np.asarray(array).astype(dt)


def is_float_type(dtype: Any) -> bool:
    """Whether ``dtype`` is a floating-point dtype (NumPy or ml_dtypes; packed ``*_x4`` included)."""
    dt = _as_dtype(dtype)
    if any(dt == x for x in _X4):
        return True
    if np.issubdtype(dt, np.floating):
        return True
    try:
        ml_dtypes.finfo(dt)
        return True
    except (ValueError, TypeError):
        return False


def sizeinbytes(dtype: Any) -> int:
    """Bytes per element of ``dtype`` (``itemsize``; a packed ``*_x4`` element is one packed word)."""
    return _as_dtype(dtype).itemsize


def finfo(dtype: Any):
    """``ml_dtypes.finfo(dtype)`` (works for NumPy and ml_dtypes float types)."""
    return ml_dtypes.finfo(_as_dtype(dtype))


def __getattr__(name: str):
    raise AttributeError(f"neuron_dtypes.{name} is not implemented by nki-mlir's neuron_dtypes "
                         f"stand-in (nki_cpu_simulator.neuron_dtypes)")
