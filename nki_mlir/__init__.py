"""nki-mlir: an open compiler for NKI kernels, built on MLIR ideas and xDSL.

``import nki_mlir as nki`` gives the NKI entry points: :func:`jit`, :func:`simulate`,
:func:`compile`, the Beta 1 ones (:func:`simulate_kernel`, :func:`baremetal`,
:func:`benchmark`, :func:`profile`; see :mod:`nki_mlir.entry`; all run on the ISA
interpreter), and the ``language`` / ``isa`` / ``typing`` modules.  ``kernel[2](...)`` /
``kernel[g0, g1](...)`` launch LNC / SPMD grids (:mod:`nki_mlir.kernel`).
"""
from __future__ import annotations

from .version import __version__  # noqa: E402

from . import errors  # noqa: E402
from .errors import NKIError  # noqa: E402
from .driver.jit import Kernel, LaunchedKernel, jit, simulate  # noqa: E402
from .driver.entry import baremetal, benchmark, profile, simulate_kernel  # noqa: E402
from . import dialect_extensions  # noqa: E402


def _load_instruction_definitions() -> None:
    """Register the instruction definitions' ops with the dialects (before a context is made)."""
    from . import instructions  # noqa: F401


dialect_extensions.add(_load_instruction_definitions)

#: submodules imported on first use (``nki.language``, ...): they load the frontend and
#: xDSL, which ``import nki_mlir`` and a cached kernel's run do not need
_LAZY_MODULES = ("language", "isa", "typing", "collectives", "compat")


def compile(kernel, *args, target: str | None = None, use_cache: bool = True,
            schedule: str | None = None, output_check: str | None = None,
            spill: bool | None = None, **kwargs):
    """Compile ``kernel`` for these arguments without running it.

    Returns a :class:`~nki_mlir.compiler.CompiledKernel`: ``.artifact`` (path of the
    artifact directory), ``.ir("nki")`` / ``.ir("nisa")`` (the IR text before and after
    the pass pipeline) and ``ck(*arrays)`` to run it on the ISA interpreter.
    ``target`` ("trn1" | "trn2" | "trn3"), ``use_cache`` and ``schedule`` ("list", the
    default, or "in-order": the serialised baseline) and ``output_check`` ("warn", the default,
    "error" or "off": an output written only in part, see the Diagnostics page) and ``spill``
    (True, the default: SBUF tensors that do not fit are kept in HBM between their uses;
    False: that is an out-of-memory error) are compiler options; other keyword
    arguments go to the kernel.  ``ck.estimate()`` gives the cost model's estimate.  For a launch ``kernel[grid]`` it returns the list of
    the program instances' CompiledKernels, in program-id order.
    """
    opts = {"use_cache": use_cache, **({"target": target} if target else {}),
            **({"schedule": schedule} if schedule else {}),
            **({"output_check": output_check} if output_check else {}),
            **({"spill": spill} if spill is not None else {})}
    if isinstance(kernel, LaunchedKernel):  # kernel[grid]: one CompiledKernel per program instance
        return kernel.compile_with(args, kwargs, **opts)[0]
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    return k.compile_with(args, kwargs, **opts)


__all__ = ["jit", "simulate", "simulate_kernel", "baremetal", "benchmark", "profile", "compile", "Kernel", "language", "isa", "typing", "compat",
           "errors", "NKIError", "__version__"]


def __getattr__(name: str):
    """The submodules of ``_LAZY_MODULES`` and ``nki.dtype``, imported on first use (so
    ``python -m nki_mlir.compat`` also runs it as ``__main__`` without importing it twice)."""
    import importlib
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name == "dtype":     # ``nki.dtype``: the type of NKI dtypes (``dtype: nki.dtype``)
        return importlib.import_module(".language", __name__).DType
    raise AttributeError(f"module 'nki_mlir' has no attribute {name!r}")
