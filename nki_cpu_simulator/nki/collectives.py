"""``nki_cpu_simulator.nki.collectives``: is :mod:`nki_mlir.collectives` (``nki.collectives``).

Also what ``import nki.collectives`` loads once the nki-library conftest has aliased
``nki`` to :mod:`nki_cpu_simulator.nki` (it aliases only language / isa / typing /
compiler / tensor, not collectives).
"""
from nki_cpu_simulator._alias import become

become(__name__, "nki_mlir.collectives")
