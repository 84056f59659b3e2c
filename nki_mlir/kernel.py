"""``@nki.jit``: the kernel object users decorate their functions with.

Calling a :class:`Kernel` on NumPy arrays compiles it (cached on the argument shapes,
dtypes and compile-time values) and runs it on the ISA interpreter, returning NumPy
arrays -- NKI's baremetal/simulation behaviour (nki_spec.md section 1.1, 1.3).
"""
from __future__ import annotations

import functools
from typing import Any

from .errors import NKIError


class Kernel:
    """A ``@nki.jit`` kernel.  ``kernel(*arrays)`` compiles (cached) and runs it."""

    def __init__(self, fn, **options: Any):
        self.fn = fn
        self.options = dict(options)
        functools.update_wrapper(self, fn)

    def compile(self, *args: Any, **kwargs: Any):
        """Compile for these arguments; returns a :class:`~nki_mlir.compiler.CompiledKernel`."""
        return self.compile_with(args, kwargs)

    def compile_with(self, args: tuple, kwargs: dict, **options: Any):
        """Compile with driver options (``target``, ``use_cache``) on top of the decorator's."""
        from .compiler import compile_kernel
        try:
            return compile_kernel(self.fn, args, kwargs, **{**self.options, **options})
        except NKIError as exc:
            raise exc.with_traceback(None) from None  # the user's error, not our frames

    def __call__(self, *args: Any, **kwargs: Any):
        compiled = self.compile(*args, **kwargs)
        try:
            return compiled(*args, **kwargs)
        except NKIError as exc:
            raise exc.with_traceback(None) from None

    def __getitem__(self, grid):
        g = grid if isinstance(grid, tuple) else (grid,)
        if g in ((), (1,)):
            return self
        raise NKIError(f"launching {self.fn.__name__}[{grid}] (SPMD grids / LNC > 1) is not "
                       f"supported by nki-mlir yet", category="not implemented")

    def __repr__(self) -> str:
        return f"<nki.jit kernel {self.fn.__name__}>"


def jit(fn=None, **options: Any):
    """Decorate a kernel: ``@nki.jit`` or ``@nki.jit(target="trn1")``.

    Options: ``target`` ("trn1" | "trn2" | "trn3"; default: ``NEURON_PLATFORM_TARGET_OVERRIDE``
    or trn2).  ``mode`` and ``platform_target`` from older NKI releases are accepted and
    ignored except as noted in the NKI docs (nki_spec.md section 1.1).
    """
    if fn is None:
        return lambda f: Kernel(f, **options)
    if isinstance(fn, Kernel):
        return fn
    return Kernel(fn, **options)


def simulate(kernel):
    """``nki.simulate(kernel)(*arrays)``: run a kernel on the ISA interpreter (NKI 0.3+ spelling)."""
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    return k


def simulate_kernel(kernel, *args: Any, **kwargs: Any):
    """NKI Beta 1's ``nki.simulate_kernel(kernel, *arrays)``: run on the ISA interpreter."""
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    return k(*args, **kwargs)
