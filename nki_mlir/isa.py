"""``nki.isa`` (``nisa``): the ISA instructions and their enums.

Every instruction takes ``dst`` first (NKI Beta 2+ convention).  Semantics, defaults and
constraints: the NKI ``nki.isa`` API pages.  These are markers
compiled by the frontend; calling them outside an ``@nki.jit`` kernel raises.
"""
from __future__ import annotations

from .frontend.builtins import Builtin as _B
from .frontend.builtins import Enum as _Enum

engine = _Enum("engine", {"unknown": 0, "tensor": 1, "scalar": 2, "gpsimd": 3, "dma": 4,
                          "vector": 5, "sync": 6})
reduce_cmd = _Enum("reduce_cmd", {"idle": 0, "reset": 1, "reduce": 2, "reset_reduce": 3,
                                  "load_reduce": 4})
dge_mode = _Enum("dge_mode", {"unknown": 0, "swdge": 1, "hwdge": 2, "none": 3})
oob_mode = _Enum("oob_mode", {"error": 0, "skip": 1})
matmul_perf_mode = _Enum("matmul_perf_mode", {"none": 0, "double_row": 1})
nc_version = _Enum("nc_version", {"gen2": 2, "gen3": 3, "gen4": 4})
#: DMA of nisa.sendrecv: the shared DMA (default) or GpSimd's internal DMA (nki.isa.dma_engine)
dma_engine = _Enum("dma_engine", {"dma": 0, "gpsimd_dma": 1})

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
