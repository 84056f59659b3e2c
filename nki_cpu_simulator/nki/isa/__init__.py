"""``nki_cpu_simulator.nki.isa``: is :mod:`nki_mlir.isa` (``nki.isa``).

``nki_cpu_simulator.nki.isa.constants`` is :mod:`nki_mlir.isa_constants`.
"""
from nki_cpu_simulator._alias import become

become(__name__, "nki_mlir.isa", {"constants": "nki_mlir.isa_constants"})
