"""Implementation of the ``nki.compiler.frontend`` / ``nki.compiler.ncc_driver`` stand-ins.

They exist so modules that import the Neuron compiler's Python front end at import time
(nki-library's ``test/utils/kernel_tracer.py``) can be imported under the CPU simulator.
nki-mlir has its own front end and driver (:mod:`nki_mlir.frontend`,
:func:`nki_mlir.compile`); it does not implement the Neuron compiler's ``NKIFrontend`` /
``ParserFrontend`` / ``CompileOptions`` API: the stand-ins can be constructed, but using an
instance (any attribute, or calling it) raises ``NotImplementedError``.
"""
from __future__ import annotations

from typing import Any


class _NotProvided:
    """Base of the stand-ins.

    Constructing one works (``test/utils/kernel_tracer.py`` builds a ``ParserFrontend()``
    as a default argument at import time); any attribute or method use of the instance
    raises :class:`NotImplementedError`.
    """

    _what = "this Neuron compiler class"

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def __getattr__(self, name: str):
        raise NotImplementedError(
            f"{self._what}.{name}: {self._what} is part of the Neuron compiler (neuronxcc), "
            f"which nki-mlir's nki_cpu_simulator shim does not provide; use simulation mode "
            f"(--test-mode simulation), or nki_mlir.compile(kernel, *arrays) for nki-mlir's "
            f"own compiler")

    def __call__(self, *args: Any, **kwargs: Any):
        return self.__getattr__("__call__")


class NKIFrontend(_NotProvided):
    """Stand-in for ``nki.compiler.frontend.NKIFrontend`` (using an instance raises NotImplementedError)."""

    _what = "nki.compiler.frontend.NKIFrontend"


class ParserFrontend(_NotProvided):
    """Stand-in for ``nki.compiler.frontend.ParserFrontend`` (using an instance raises NotImplementedError)."""

    _what = "nki.compiler.frontend.ParserFrontend"


class CompileOptions(_NotProvided):
    """Stand-in for ``nki.compiler.ncc_driver.CompileOptions`` (using an instance raises NotImplementedError)."""

    _what = "nki.compiler.ncc_driver.CompileOptions"
