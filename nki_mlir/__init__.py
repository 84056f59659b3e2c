"""nki-mlir: an open compiler for NKI kernels, built on MLIR ideas and xDSL.

``import nki_mlir as nki`` gives the NKI entry points: :func:`jit`, :func:`simulate`,
:func:`compile`, and the ``language`` / ``isa`` / ``typing`` modules.
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import compat, errors, isa, language, typing  # noqa: E402
from .errors import NKIError  # noqa: E402
from .kernel import Kernel, jit, simulate, simulate_kernel  # noqa: E402


def compile(kernel, *args, target: str | None = None, use_cache: bool = True, **kwargs):
    """Compile ``kernel`` for these arguments without running it.

    Returns a :class:`~nki_mlir.compiler.CompiledKernel`: ``.artifact`` (path of the
    artifact directory), ``.ir("nki")`` / ``.ir("nisa")`` (the IR text before and after
    the pass pipeline) and ``ck(*arrays)`` to run it on the ISA interpreter.
    ``target`` ("trn1" | "trn2" | "trn3") and ``use_cache`` are compiler options; other
    keyword arguments go to the kernel.
    """
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    opts = {"use_cache": use_cache, **({"target": target} if target else {})}
    return k.compile_with(args, kwargs, **opts)


__all__ = ["jit", "simulate", "simulate_kernel", "compile", "Kernel", "language", "isa", "typing", "compat",
           "errors", "NKIError", "__version__"]
