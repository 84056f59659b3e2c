"""``nki_cpu_simulator.nki.builtin``: stand-in for NkiCpuSimulator's ``nki.builtin``.

The nki-library test harness binds it as the Python builtin name ``builtin``
(``builtins.builtin = nki_cpu_simulator.nki.builtin``); no nki-library kernel or test uses
it.  It exposes nki-mlir's ``language`` and ``isa`` modules; any other attribute is an
:class:`AttributeError` naming the gap.

Doc: NKI CPU simulator guide (aws-neuron-sdk ``nki/guides/nki_simulator.rst``).
"""
from __future__ import annotations

from nki_mlir import isa, language  # noqa: F401

__all__ = ["language", "isa"]


def __getattr__(name: str):
    raise AttributeError(f"nki.builtin.{name} is not provided by nki-mlir's nki_cpu_simulator "
                         f"shim (only language and isa are)")
