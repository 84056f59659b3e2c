"""The NumPy ISA interpreter: executes ``nisa``-dialect IR as the hardware would.

Usage::

    from nki_mlir.runtime.interpreter import decode
    prog = decode(module)            # once per module (raises NKIError for IR it cannot run)
    out, = prog.run([a, b])          # NumPy arrays in, NumPy arrays out (func.return order)

What it executes is what ``lower-nki-to-nisa`` + ``nisa-allocate`` + ``nisa-schedule``
produce: one ``func.func`` per kernel whose body uses ``scf.for``, ``arith`` index
arithmetic and constants, ``memref.subview``, ``nisa.alloc`` / ``nisa.release`` and the
``nisa`` instructions (``dma_copy``, ``tensor_copy``, ``memset``, ``tensor_tensor_arith``,
``tensor_scalar_arith``, ``activation``, ``reciprocal``, ``tensor_reduce_arith``,
``matmul``, ``nc_transpose``, ``iota``, ``affine_select``).  By default instructions run
in program (text) order and the ``nkim.*`` schedule attributes are ignored;
``Program.run(mode="queues")`` executes the schedule's engine queues instead
(:mod:`.queues`) and ``hazards=True`` (or ``NKI_MLIR_HAZARDS=1``) adds the hazard checks
(:mod:`.hazards`: races, overlapping live buffers, reads of never-written SBUF/PSUM,
accumulation onto non-matmul PSUM data).

Design (docs/backend.md): :func:`decode` turns the function into a flat list of
pre-bound closures ``f(env)``; SSA values live in integer slots of the list ``env`` (slot 0
holds the per-run state), and ``scf.for`` is a closure running its body's list.  Memory is
physical (:mod:`.memory`); numerics follow :mod:`.numerics`.  Semantics of each instruction:
nki.isa API reference (nki/api/nki/isa) (NKI ``nki.isa`` API pages).

Modules: this one picks the function and target; :mod:`.handlers` walks it (the table of
closure builders), with the decoder's state in :mod:`.decoder` and the slot environment and
shared helpers in :mod:`.env`; the closure builders are in :mod:`.control`
(``func`` / ``scf`` / ``arith``), :mod:`.views` (``memref.subview``), :mod:`.isa_memory`
(``alloc`` / ``release`` / ``memset`` / the copy closure), :mod:`.isa_alu`, :mod:`.isa_activation`,
:mod:`.isa_matmul` (``matmul``), and
the instruction definitions' ``interpret`` (``nki_mlir/instructions``); :mod:`.program`
runs the result.

Every fault while running (out-of-bounds subview, bad placement, ...) raises
:class:`~nki_mlir.errors.NKIRuntimeError` located at the op; unexpected Python exceptions
inside an instruction are wrapped the same way.
"""
from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ..diagnostics import error_at
from ..dialects.common import TargetAttr
from ..errors import NKIRuntimeError
from ..targets import DEFAULT
from .handlers import decode_function
from .program import Program

__all__ = ["Program", "decode"]


def decode(module: ModuleOp, func_name: str | None = None, wide: bool = False) -> Program:
    """Decode ``module`` once into a :class:`Program`.

    Args:
        module: a ``builtin.module`` of ``nisa`` IR (optionally with ``nisa.target``).
        func_name: the ``func.func`` to run; default: the only (or first) public function
            with a body.
        wide: decode the program a run with ``NKI_PRECISE_FP=0`` executes (bf16 / fp8
            tensors stored as float32, :mod:`.precise_fp`) instead of the default one, which
            decodes it when such a run first asks.

    Raises:
        NKIRuntimeError: an op the interpreter cannot execute, or a malformed function.
    """
    if not isinstance(module, ModuleOp):
        raise NKIRuntimeError(f"decode() expects a builtin.module, got {type(module).__name__}")
    funcs = [op for op in module.body.ops if isinstance(op, func.FuncOp)]
    if func_name is not None:
        chosen = [f for f in funcs if f.sym_name.data == func_name]
        if not chosen:
            have = ", ".join("@" + f.sym_name.data for f in funcs) or "none"
            raise error_at(module, f"no func.func @{func_name} in the module (functions: {have})",
                           NKIRuntimeError)
        fop = chosen[0]
    else:
        public = [f for f in funcs if not f.is_declaration and
                  (f.sym_visibility is None or f.sym_visibility.data == "public")]
        if not public:
            raise error_at(module, "the module has no public func.func with a body to run",
                           NKIRuntimeError)
        fop = public[0]
    if fop.is_declaration:
        raise error_at(fop, f"func.func @{fop.sym_name.data} has no body", NKIRuntimeError)
    target = DEFAULT
    t = module.attributes.get("nisa.target")
    if isinstance(t, TargetAttr):
        target = t.target.data
    return decode_function(target, fop, wide)

