"""``nki.compiler.ncc_driver`` stand-in: ``CompiledKernel`` is nki-mlir's
:class:`nki_mlir.compiler.CompiledKernel`; ``CompileOptions`` instances raise
:class:`NotImplementedError` when used."""
from nki_cpu_simulator._alias import become

become(__name__, "nki_cpu_simulator.nki.compiler._ncc_driver")
