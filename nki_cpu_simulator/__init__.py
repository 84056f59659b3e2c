"""``nki_cpu_simulator``: a drop-in for AWS's NkiCpuSimulator package, backed by nki-mlir.

AWS's nki-library test suite (``test/utils/simulation_setup.py``, ``--test-mode
simulation``) imports ``nki_cpu_simulator.nki`` and its submodules, aliases them to the
``nki`` module names and runs each kernel with
``nki.cpu_simulate(kernel)[lnc](**arrays)``.  This package provides those names on top
of nki-mlir; nothing here re-implements NKI:

- ``nki_cpu_simulator.nki.language`` / ``.isa`` / ``.isa.constants`` / ``.typing`` /
  ``.language.dtypes`` / ``.collectives`` *are* nki-mlir's modules (:mod:`nki_mlir.language`,
  :mod:`nki_mlir.isa`, :mod:`nki_mlir.isa_constants`, :mod:`nki_mlir.typing`,
  :mod:`nki_mlir.dtypes`, :mod:`nki_mlir.collectives`), the same objects
  :func:`nki_mlir.compat.install` maps ``nki.*`` to;
- ``nki_cpu_simulator.nki`` re-exports :mod:`nki_mlir`'s entry points (``jit``,
  ``simulate``, ``dtype``, ...) and adds :func:`cpu_simulate`, which is
  :func:`nki_mlir.simulate` (a kernel on nki-mlir's NumPy ISA interpreter) with the
  target taken from ``NKI_NC_VERSION``;
- ``nki_cpu_simulator.nki.compiler`` / ``.tensor`` / ``.builtin`` are small stand-ins
  (see their docstrings): the test suite imports them, simulation does not use them.

``nki_cpu_simulator.stubs`` is a pytest plugin (``-p nki_cpu_simulator.stubs``) holding
stand-ins for the modules the public nki-library snapshot imports but does not ship
(``neuron_dtypes``, ``test.utils.perf_analysis_private``).

Doc: NKI CPU simulator guide, aws-neuron-sdk ``nki/guides/nki_simulator.rst``
("NKI CPU Simulator": ``nki.simulate`` runs NKI kernels on the CPU with NumPy), and the
``nki`` API page ``nki/api/nki.rst`` (``jit``, ``simulate``).
"""
from __future__ import annotations

from . import nki
from .nki import cpu_simulate

__all__ = ["nki", "cpu_simulate"]
