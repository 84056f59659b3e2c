"""``nki_cpu_simulator.nki.language.dtypes``: is :mod:`nki_mlir.dtypes`."""
from nki_cpu_simulator._alias import become

become(__name__, "nki_mlir.dtypes")
