"""``nki.typing`` / ``neuronxcc.nki.typing`` (``nt``): kernel tensor annotations.

Forms (NKI Beta 1 ``neuronxcc.nki.typing`` and the 0.3+ ``nki.typing`` module; the
``err_annotation_shape_mismatch`` entry of the Beta 1 ``nki.errors`` page):

- ``nt.tensor``: any tensor; ``nt.tensor[128, 512]`` / ``nt.tensor[(128, 512)]``: a tensor of
  that shape; ``nt.tensor[[128, 512], nl.bfloat16]`` / ``nt.tensor[128, 512, nl.bfloat16]``:
  shape and dtype (the form NKI samples use to describe benchmark arguments).
- ``nt.mutable_tensor`` (optionally with a shape, ``nt.mutable_tensor[128, 512]``) or
  ``nt.tensor[nt.mutable]``: a kernel parameter the kernel may write (Beta 1: parameters
  are immutable otherwise, ``err_cannot_update_immutable_parameter``; a written mutable
  parameter must be returned, ``err_mutable_parameter_not_returned``).
  ``nt.immutable`` is the explicit default.
- ``nt.scalar``: a compile-time scalar argument (accepted, not checked).

An annotation object also describes a tensor: ``.shape`` (tuple of ints or None),
``.dtype`` (NumPy dtype or None) and ``.mutable``.

Checks (``nki_mlir/frontend/kernel_checks.py``, at compile time): a kernel parameter
annotated with a shape must receive a tensor of exactly that shape, otherwise a located
``NKITypeError`` at the parameter with code ``err_annotation_shape_mismatch``; with a dtype,
a tensor of that dtype.  ``frontend/beta1/trace.check_annotation`` applies the same check to
``name: nt.tensor[...] = value`` statements in a kernel body.
"""
from __future__ import annotations

from .frontend.annotations import (  # noqa: F401
    ScalarAnnotation, TensorAnnotation, annotation_of, immutable, mutable, mutable_tensor, scalar,
    tensor,
)

__all__ = ["tensor", "mutable_tensor", "scalar", "mutable", "immutable", "TensorAnnotation",
           "ScalarAnnotation", "annotation_of"]
