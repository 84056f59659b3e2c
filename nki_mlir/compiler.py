"""``nki_mlir.compiler``: the compile driver's names at their first import path.

The driver lives in :mod:`nki_mlir.driver` (:mod:`~nki_mlir.driver.compile`:
:func:`compile_kernel`, :class:`CompiledKernel`; :mod:`~nki_mlir.driver.pipeline`:
:func:`run_pipeline`, :func:`print_module`, :func:`parse_module`); target names are
:mod:`nki_mlir.targets` (:func:`resolve_target`).
"""
from .driver.compile import PROGRESS_MIN_OPS, CompiledKernel, _disk_hit, compile_kernel  # noqa: F401
from .driver.pipeline import ir_dumper, parse_module, print_module, run_pipeline  # noqa: F401
from .options import verify_each_pass  # noqa: F401
from .targets import ALIASES as TARGET_ALIASES  # noqa: F401
from .targets import resolve_target  # noqa: F401

__all__ = ["compile_kernel", "CompiledKernel", "run_pipeline", "resolve_target", "print_module",
           "parse_module"]
