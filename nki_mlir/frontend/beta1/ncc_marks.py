"""What the Beta 1 ``neuronxcc.nki.compiler`` module (:mod:`nki_mlir.beta1.compiler`) and the
frontend share: the attribute ``@ncc.force_auto_alloc`` sets on a kernel function, and the
context manager ``ncc.allocation_scope()`` gives (a no-op: the allocator already frees every
tensor after its last use)."""
from __future__ import annotations

#: attribute set on a kernel function by ``ncc.force_auto_alloc``
FORCE_AUTO_ALLOC_ATTR = "_nki_force_auto_alloc"


class AllocationScope:
    """``ncc.allocation_scope()``: a context manager that does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
