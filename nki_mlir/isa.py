"""``nki.isa`` (``nisa``): the ISA instructions and their enums.

Every instruction takes ``dst`` first (NKI Beta 2+ convention).  Semantics, defaults and
constraints: the NKI ``nki.isa`` API pages.  These are markers
compiled by the frontend; calling them outside an ``@nki.jit`` kernel raises.
"""
from __future__ import annotations

from .frontend.builtins import Builtin as _B
from .isa_constants import (  # noqa: F401  (the enums)
    dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode, reduce_cmd,
)

unknown_engine = engine.unknown  # deprecated: use engine.unknown
tensor_engine = engine.tensor  # deprecated aliases kept for old kernels
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd

from .instructions import DEFINITIONS as _DEFINITIONS  # noqa: E402  (registers the definitions)
from .isa_names import INSTRUCTIONS as _INSTRUCTIONS  # noqa: E402
for _name in _INSTRUCTIONS:
    globals()[_name] = _B(f"nisa.{_name}", doc=_DEFINITIONS[_name].doc if _name in _DEFINITIONS else "")
del _name

from .frontend.isa_control import Register as VirtualRegister  # noqa: E402
from .errors import NKIError as _NKIError  # noqa: E402


class NkiValidationError(_NKIError):
    """Raised when hardware constraints are violated (NKI ``nki.isa.NkiValidationError``)."""

    category = "invalid kernel"


class NkiInstruction:
    """Opaque handle to a traced NKI instruction (NKI ``nki.isa.NkiInstruction``).

    nki-mlir orders instructions by their dependences (dependence analysis and the list
    schedule), so ``depends_on`` records nothing extra and returns the handle.
    """

    def depends_on(self, *producers) -> "NkiInstruction":
        return self


from . import isa_constants as constants  # noqa: E402  (``nki.isa.constants``)

__all__ = [n for n in dir() if not n.startswith("_")]
