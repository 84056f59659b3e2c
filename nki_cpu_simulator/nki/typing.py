"""``nki_cpu_simulator.nki.typing``: is :mod:`nki_mlir.typing` (``nki.typing``)."""
from nki_cpu_simulator._alias import become

become(__name__, "nki_mlir.typing")
