"""Canonical module behind ``nki_cpu_simulator.nki.compiler.ncc_driver`` (one copy under every alias)."""
from nki_mlir.compiler import CompiledKernel

from nki_cpu_simulator.nki.compiler._standins import CompileOptions

__all__ = ["CompiledKernel", "CompileOptions"]
