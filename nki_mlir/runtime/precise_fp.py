"""``NKI_PRECISE_FP``: the interpreter's storage of low-precision floats.

AWS's NKI simulator (NKI simulator guide (nki/guides/nki_simulator), section "Precise
Floating-Point Mode") stores ``bfloat16``, ``float8_e4m3`` and ``float8_e5m2`` tensors with
``ml_dtypes`` by default (``NKI_PRECISE_FP=1``: numerics similar to the hardware), and every
such tensor as ``float32`` with ``NKI_PRECISE_FP=0``, "eliminating rounding and truncation
effects" -- to tell an algorithmic bug from accuracy lost to downcasts.  The interpreter
reads the variable at every run (:func:`precise`):

- ``1`` (or unset, or empty): every tensor is stored in its declared dtype; a value written
  to a bf16 / fp8 tensor is rounded to it (:mod:`.numerics`).
- ``0``: every SBUF, PSUM and HBM tensor the kernel allocates with a dtype in
  :data:`WIDENED`, and every view of it, is stored as float32
  (:meth:`.decoder.Decoder.widened`), so writing it (an instruction's ``dst``, a
  ``tensor_copy`` / DMA to bf16, a matmul into a bf16 PSUM tile) does not round.  The
  declared dtypes still decide everything else: SBUF / PSUM placement and capacity checks
  (:meth:`.memory.Memory.wide_region`), the instructions' dtype checks, the cost model and
  the compiled artifact are the same in both modes.  Integer, bool, float32, float16,
  ``float8_e8m0fnu`` and the packed MX ``*_x4`` types keep their storage.  The caller's
  arrays keep their dtype: kernel arguments are read (bf16 / fp8 values are exact in
  float32) and written in their own dtype, and a kernel's outputs too -- a bf16 output is
  rounded where the kernel writes it.  A bit reinterpretation of a float32-stored tensor
  (``nisa.view_dtype``, a ``memref.reinterpret_cast`` changing the element type, an fp8
  ``nc_matmul`` transpose into a 16-bit tile) has no float32 meaning: it is a located
  runtime error in this mode; a bf16 / fp8 view of a tensor of another dtype reads its bytes
  as in the default mode.

The run executes :meth:`.program.Program.wide`, the function decoded once more (on first
use) for this storage -- a compiled kernel's from its artifact (:mod:`.ir_release`): one
compiled kernel serves both modes, and a call in either mode never gets the other's
numerics.

Any other value is an :class:`~nki_mlir.errors.NKIError` naming the variable.
"""
from __future__ import annotations

import os

import numpy as np

from .. import dtypes
from ..errors import NKIError

ENV = "NKI_PRECISE_FP"
F32 = np.dtype(np.float32)
#: the dtypes stored as float32 with ``NKI_PRECISE_FP=0`` (the guide's bfloat16, float8_e4m3
#: and float8_e5m2, and the other one-value fp8 format, float8_e4m3fn)
WIDENED = frozenset({dtypes.bfloat16, dtypes.float8_e4m3, dtypes.float8_e5m2,
                     dtypes.float8_e4m3fn})

# the environment as a dict of encoded keys (POSIX): a lookup costs ~0.1 us, against
# ~1-2 us for ``os.environ.get`` of a missing variable (read at every run)
try:
    _ENV_DATA = os.environ._data                       # type: ignore[attr-defined]
    _KEY = os.environ.encodekey(ENV)                   # type: ignore[attr-defined]
except AttributeError:                                 # pragma: no cover - non-POSIX
    _ENV_DATA, _KEY = os.environ, ENV
_PRECISE = {None: True, b"": True, b"1": True, b"0": False,
            "": True, "1": True, "0": False}


def precise() -> bool:
    """Whether this run stores bf16 / fp8 in their own dtypes (``NKI_PRECISE_FP``, default 1).

    Raises:
        NKIError: the variable is set to anything but ``0`` or ``1``.
    """
    raw = _ENV_DATA.get(_KEY)
    mode = _PRECISE.get(raw)
    if mode is None:
        value = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        raise NKIError(f"{ENV}={value!r}: expected 1 (bf16 / fp8 tensors stored in their own "
                       f"dtype, the default) or 0 (stored as float32, without rounding; NKI "
                       f"simulator guide, Precise Floating-Point Mode)",
                       category="bad option")
    return mode


def reinterpret_error(op_name: str, a: np.dtype, b: np.dtype) -> str:
    """The message of the located error of a view (``op_name``) from declared dtype ``a``
    to ``b`` that reinterprets the bits of a tensor stored as float32."""
    return (f"{op_name} reinterprets the bits of a {dtypes.name_of(a)} tensor as "
            f"{dtypes.name_of(b)}; with {ENV}=0 bfloat16 / fp8 tensors are stored as float32 "
            f"values, whose bits are not the declared format's (run with {ENV}=1)")
