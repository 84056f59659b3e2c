"""``neuronxcc.nki``: NKI Beta 1 (NKI 0.1, Neuron SDK <= 2.26) on nki-mlir.

``nki_mlir.compat.install()`` maps ``neuronxcc.nki`` to this module and
``neuronxcc.nki.language`` / ``.isa`` / ``.typing`` / ``.compiler`` to its submodules, so
kernels written against Beta 1 run unmodified.  The Beta 1 front compiles to the same
``nki`` dialect as Beta 2 (docs/frontend.md): value-returning ``nl.*`` / ``nisa.*``
calls allocate their result tile, ``nl.arange`` / ``nl.mgrid`` index expressions become
views, ``mask=`` predicates shrink instructions.  Semantics: NKI simulator guide (nki/guides/nki_simulator) (the Beta 1 columns).
"""
from __future__ import annotations

from .. import errors  # noqa: F401
from ..driver.jit import Kernel, jit  # noqa: F401
from ..driver.entry import baremetal, benchmark, profile, simulate_kernel  # noqa: F401
from . import compiler, isa, language  # noqa: F401
from .. import typing  # noqa: F401
#: ``neuronxcc.nki.tensor``: the tensor type, used in Beta 1 kernels' annotations
#: (``def k(x: nki.tensor) -> nki.tensor``); annotations are not checked against it.
from ..typing import tensor  # noqa: F401,E402

__all__ = ["jit", "simulate_kernel", "baremetal", "benchmark", "profile", "Kernel", "language", "isa", "typing", "compiler", "errors", "tensor"]
