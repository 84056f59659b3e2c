"""``nki.compiler.frontend`` stand-in: ``ParserFrontend().compile(kernel, inputs=...)`` traces
and compiles with nki-mlir; anything else of ``NKIFrontend`` / ``ParserFrontend`` raises
:class:`NotImplementedError` (see :mod:`nki_cpu_simulator.nki.compiler._standins`)."""
from nki_cpu_simulator._alias import become

become(__name__, "nki_cpu_simulator.nki.compiler._frontend")
