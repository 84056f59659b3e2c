"""``nki_cpu_simulator.nki.tensor``: stand-in for NkiCpuSimulator's ``nki.tensor``.

The nki-library test harness aliases ``nki.tensor`` to this module but no test or kernel
uses it.  It exposes nki-mlir's tensor type, ``ndarray`` (:data:`nki_mlir.language.ndarray`),
and the dtype type ``dtype``; any other attribute is an :class:`AttributeError` naming
the gap.

Doc: NKI CPU simulator guide (aws-neuron-sdk ``nki/guides/nki_simulator.rst``).
"""
from __future__ import annotations

from nki_mlir.language import DType as dtype  # noqa: F401
from nki_mlir.language import ndarray  # noqa: F401

__all__ = ["ndarray", "dtype"]


def __getattr__(name: str):
    raise AttributeError(f"nki.tensor.{name} is not provided by nki-mlir's nki_cpu_simulator "
                         f"shim (only ndarray and dtype are)")
