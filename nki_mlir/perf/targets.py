"""Compatibility path: the cost model's per-target constants live in :mod:`nki_mlir.targets`
with every other per-target fact (``TARGETS`` here is :data:`nki_mlir.targets.MODELS`)."""
from ..targets import (  # noqa: F401
    CLOCKED_ENGINES, MATMUL_KINDS, SOURCES, UNITS, TargetModel, constants_table, target_model,
)
from ..targets import MODELS as TARGETS  # noqa: F401
