"""``nki_cpu_simulator.nki.language``: is :mod:`nki_mlir.language` (``nki.language``).

``nki_cpu_simulator.nki.language.dtypes`` is :mod:`nki_mlir.dtypes`.
"""
from nki_cpu_simulator._alias import become

become(__name__, "nki_mlir.language", {"dtypes": "nki_mlir.dtypes"})
