"""The dialect registry: the single source of truth for ``nki-opt``, the compiler and tests."""
from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect

from . import xdsl_fixes  # noqa: F401  (upstream printer fixes, applied on import)
from . import xdsl_speedups  # noqa: F401  (memoized attribute readers, applied on import)
from . import fast_verify  # noqa: F401  (IRDL op verifier from a per-definition plan)
from . import fast_build  # noqa: F401  (IRDL op builder from a per-definition plan)
from . import fast_op_init  # noqa: F401  (Operation.__init__ without property setters)


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Our dialects by name, as lazy factories (``{"nki": ..., "nisa": ...}``)."""

    def nki() -> Dialect:
        from .nki import NKI
        return NKI

    def nisa() -> Dialect:
        from .nisa import NISA
        return NISA

    return {"nki": nki, "nisa": nisa}


def make_context() -> Context:
    """A context with the upstream dialects we use (builtin, func, arith, scf, memref) and ours,
    complete with the ops of every instruction definition (:mod:`nki_mlir.dialect_extensions`)."""
    from xdsl.dialects import arith, builtin, func, memref, scf

    from ..dialect_extensions import load_all
    load_all()      # the ops of the instruction definitions (registered by the package root)
    ctx = Context()
    for d in (builtin.Builtin, func.Func, arith.Arith, scf.Scf, memref.MemRef):
        ctx.load_dialect(d)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
