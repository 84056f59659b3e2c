"""``nki_cpu_simulator.nki``: the ``nki`` module of the CPU simulator, backed by nki-mlir.

Re-exports :mod:`nki_mlir`'s public names (``jit``, ``simulate``, ``simulate_kernel``,
``compile``, ``dtype``, ``language``, ``isa``, ``typing``, ``collectives``, ...; the same
objects) and adds :func:`cpu_simulate`.  Submodules ``language``, ``language.dtypes``,
``isa``, ``isa.constants``, ``typing``, ``collectives`` are nki-mlir's modules;
``compiler``, ``tensor`` and ``builtin`` are stand-ins (see each).

Doc: NKI CPU simulator guide (aws-neuron-sdk ``nki/guides/nki_simulator.rst``) and the
``nki`` API page (``nki/api/nki.rst``).
"""
from __future__ import annotations

import os
from typing import Any

import nki_mlir as _nm
from nki_mlir import (  # noqa: F401  (re-exports: the nki entry points)
    Kernel,
    LaunchedKernel,
    NKIError,
    baremetal,
    benchmark,
    collectives,
    compile,
    dtype,
    errors,
    isa,
    jit,
    language,
    profile,
    simulate,
    simulate_kernel,
    typing,
)

__version__ = _nm.__version__

#: ``NKI_NC_VERSION`` values (``nki.isa.nc_version`` member names) -> nki-mlir targets.
_NC_TARGETS = {"gen2": "trn1", "gen3": "trn2", "gen4": "trn3"}


class _CpuSimulated:
    """``cpu_simulate(kernel)``: index with the LNC degree, call with the arrays.

    ``cpu_simulate(k)(*arrays, **named)`` runs ``k`` once; ``cpu_simulate(k)[lnc](...)``
    runs the LNC launch ``k[lnc]`` (``lnc`` 1 or 2; ``[1]`` is the plain call).  Both go
    through :func:`nki_mlir.simulate` / :class:`nki_mlir.LaunchedKernel`, so the kernel is
    traced, compiled and executed by nki-mlir's NumPy ISA interpreter; the result is what
    the kernel returns (NumPy arrays: one, a tuple, or ``None``).
    """

    def __init__(self, kernel: Any, lnc: int | None = None):
        self._kernel = kernel
        self._lnc = lnc

    def __getitem__(self, lnc: Any) -> "_CpuSimulated":
        if self._lnc is not None:
            raise NKIError(f"cpu_simulate({self._name()})[{self._lnc}] is already launched; "
                           f"index it once, e.g. cpu_simulate(kernel)[2](...)",
                           category="bad launch")
        return _CpuSimulated(self._kernel, lnc)

    def _name(self) -> str:
        return getattr(self._kernel, "__name__", repr(self._kernel))

    def _runnable(self):
        from nki_mlir.entry import unwrap
        k = simulate(unwrap(self._kernel))
        if isinstance(k, Kernel):
            target = _target_from_env()
            if target and "target" not in k.options:
                k = Kernel(k.fn, **{**k.options, "target": target})
            if self._lnc is not None and not (isinstance(self._lnc, int) and self._lnc == 1):
                k = k[self._lnc]
        elif self._lnc is not None:
            raise NKIError(f"cpu_simulate({self._name()})[{self._lnc}]: the kernel is already "
                           f"launched with a grid", category="bad launch")
        return k

    def __call__(self, *args: Any, **kwargs: Any):
        return self._runnable()(*args, **kwargs)

    def __repr__(self) -> str:
        lnc = "" if self._lnc is None else f"[{self._lnc}]"
        return f"<cpu_simulate({self._name()}){lnc} on nki-mlir>"


def _target_from_env() -> str | None:
    """The nki-mlir target named by ``NKI_NC_VERSION`` (set by the nki-library test
    harness to ``platform_target.get_nc_gen()``), or ``None`` (nki-mlir's default,
    ``NEURON_PLATFORM_TARGET_OVERRIDE`` or trn2)."""
    gen = os.environ.get("NKI_NC_VERSION")
    if not gen:
        return None
    return _NC_TARGETS.get(gen, gen)


def cpu_simulate(kernel: Any) -> _CpuSimulated:
    """``nki.cpu_simulate(kernel)[lnc](**arrays)``: run ``kernel`` on nki-mlir's CPU interpreter.

    ``kernel`` is an ``@nki.jit`` kernel or a plain kernel function.  The returned object
    supports ``[lnc]`` (LNC degree 1 or 2, the launch ``kernel[lnc]``) and is called with
    the kernel's NumPy arguments, positional or by parameter name.  It returns what the
    kernel returns.  Errors are nki-mlir's located :class:`~nki_mlir.errors.NKIError`.

    The target is ``NKI_NC_VERSION`` (``gen2`` -> trn1, ``gen3`` -> trn2, ``gen4`` -> trn3)
    unless the kernel's ``@nki.jit(target=...)`` sets one.

    Doc: NKI CPU simulator guide (aws-neuron-sdk ``nki/guides/nki_simulator.rst``,
    ``nki.simulate``); ``cpu_simulate`` is the NkiCpuSimulator spelling the nki-library
    test harness calls.
    """
    return _CpuSimulated(kernel)


def __getattr__(name: str):
    """Anything else nki-mlir's top-level module has (``nki_mlir.compat``, ...)."""
    try:
        return getattr(_nm, name)
    except AttributeError:
        raise AttributeError(f"module 'nki' (nki_cpu_simulator on nki-mlir) has no attribute "
                             f"{name!r}") from None


__all__ = ["jit", "simulate", "simulate_kernel", "cpu_simulate", "compile", "baremetal",
           "benchmark", "profile", "Kernel", "LaunchedKernel", "NKIError", "dtype", "language",
           "isa", "typing", "collectives", "errors", "__version__"]
