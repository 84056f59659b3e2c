"""``nki.compiler.frontend`` stand-in: ``NKIFrontend`` / ``ParserFrontend`` instances raise
:class:`NotImplementedError` when used (see :mod:`nki_cpu_simulator.nki.compiler._standins`)."""
from nki_cpu_simulator._alias import become

become(__name__, "nki_cpu_simulator.nki.compiler._frontend")
