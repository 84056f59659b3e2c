"""The warm call's launch plan: a repeated ``kernel(*arrays)`` call in a few microseconds.

:mod:`.warm` spares a repeated call the cache key; this module spares it the rest of the
driver.  After a call ``kernel(*args, **kwargs)`` on NumPy arrays has compiled (or found) its
kernel, :func:`make` keeps a :class:`Plan` under the call's *call spec*
(:func:`call_spec`: the kernel and, per argument, ``(shape, dtype)`` of a C-contiguous,
writeable ``numpy.ndarray`` or ``(type, value)`` of an ``int`` / ``float`` / ``bool`` /
``str`` / ``None``).  The plan holds the :class:`~.warm.Guard` of the full path, the compiled
kernel and its decoded program, which arguments are the program's tensors, the resolved run
mode and the environment variables the full path reads.  :func:`call` runs it only while

- no kernel is being traced (a call inside a kernel runs inline, :meth:`.jit.Kernel.__call__`),
- the kernel's decorator options and the environment variables are those of the plan
  (``NEURON_PLATFORM_TARGET_OVERRIDE``, ``NKI_MLIR_OUTPUT_CHECK``, ``NKI_MLIR_HAZARDS``),
- the guard holds (every name bound to the same object, every function with the same code
  object: :meth:`.warm.Guard.holds`, which does not ``stat`` the source files -- see
  :mod:`.warm` for why that is exact) and
- the in-memory compile cache still holds the compiled kernel (an evicted or cleared
  entry takes the full path, which rebuilds it);

else it returns :data:`MISS` and the call takes the full path, which makes a new plan.  Any
other argument (torch / JAX tensors, non-contiguous or read-only arrays, lists, objects)
never has a plan: those calls always take the full path.  Plans are kept for at most
:data:`MAX_PLANS` calls specs (the table starts over when full).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np


#: returned by :func:`call` when the plan does not apply (the caller takes the full path)
MISS = object()
#: plans kept (each holds a compiled kernel; the table starts over when full)
MAX_PLANS = 256
#: the plans by call spec: ``driver.warm.PLANS`` (whose ``clear()`` empties it), bound by the
#: first :func:`make` -- importing ``.warm`` here would load the frontend with ``nki_mlir``
_PLANS: dict = {}

# the environment as a dict of encoded keys (POSIX ``os.environ``): a lookup there costs
# ~0.1 us, ``os.environ.get`` of a missing variable ~1-2 us (it raises and catches)
try:
    _ENV_DATA: Any = os.environ._data          # type: ignore[attr-defined]
    _ENV_KEY = os.environ.encodekey            # type: ignore[attr-defined]
except AttributeError:                        # pragma: no cover - non-POSIX
    _ENV_DATA, _ENV_KEY = os.environ, str

#: the environment variables a warm call's result depends on (the target, the output
#: check and the hazard checks; encoded keys of ``_ENV_DATA``, bound by :func:`make`)
_K0 = _K1 = _K2 = None

#: ``frontend.context._ACTIVE`` (the kernels being traced) and the in-memory cache's
#: ``memory_get``, bound by the first :func:`make` (no plan exists before it)
_TRACING: list = []
_memory_get: Any = None


def _env_snapshot() -> tuple:
    d = _ENV_DATA
    return (d.get(_K0), d.get(_K1), d.get(_K2))


def _arg_spec(a: Any) -> Any:
    t = type(a)
    if t is np.ndarray:
        f = a.flags
        if f.c_contiguous and f.writeable:
            return (a.shape, a.dtype)
        return None
    if t is int or t is bool or t is str or a is None:
        return (t, a)
    if t is float:              # by its bits: -0.0 is not 0.0, a NaN equals itself
        return (t, a.hex())
    return None


def call_spec(kernel: Any, args: tuple, kwargs: dict) -> tuple | None:
    """The call spec of ``kernel(*args, **kwargs)`` (module docstring), or None when an
    argument has no cheap spec (the call has no plan)."""
    spec = [kernel]
    for a in args:
        if type(a) is np.ndarray:      # (_arg_spec, inlined for the common argument)
            f = a.flags
            if not (f.c_contiguous and f.writeable):
                return None
            spec.append((a.shape, a.dtype))
            continue
        s = _arg_spec(a)
        if s is None:
            return None
        spec.append(s)
    if kwargs:
        for k, v in kwargs.items():
            s = _arg_spec(v)
            if s is None:
                return None
            spec.append((k, s))
    return tuple(spec)


class Plan:
    """What a warm call needs (module docstring)."""

    __slots__ = ("guard", "ck", "program", "picks", "options", "env", "mode", "hazards",
                 "returns_tuple", "in_order")

    def __init__(self, guard, ck, picks: tuple, options: dict, env: tuple, mode: str,
                 hazards: bool):
        self.guard = guard
        self.ck = ck
        self.program = ck.program
        self.picks = picks                # per program tensor: its index in args + kwargs values
        self.in_order = picks == tuple(range(len(picks)))   # the program's tensors: args[:n]
        self.options = dict(options)
        self.env = env
        self.mode = mode
        self.hazards = hazards
        self.returns_tuple = ck.spec.returns_tuple


def call(spec: tuple, kernel: Any, args: tuple, kwargs: dict) -> Any:
    """Run the plan of ``spec`` on the arguments, or return :data:`MISS` (module docstring).

    Raises:
        NKIError: a runtime error of the kernel (as the full path raises it).
    """
    plan = _PLANS.get(spec)
    if plan is None or _TRACING:
        return MISS
    d = _ENV_DATA
    if (d.get(_K0), d.get(_K1), d.get(_K2)) != plan.env or kernel.options != plan.options:
        return MISS
    g = plan.guard
    if not g.holds() or _memory_get(g.key) is not plan.ck:
        _PLANS.pop(spec, None)
        return MISS
    if plan.in_order and len(args) == len(plan.picks):
        vals = list(args)
    else:
        every = args + tuple(kwargs.values()) if kwargs else args
        vals = [every[i] for i in plan.picks]
    outs = plan.program.run_checked(vals, None, plan.mode, plan.hazards)
    if plan.returns_tuple:
        return outs
    return outs[0] if outs else None


def make(spec: tuple | None, kernel: Any, args: tuple, kwargs: dict, ck: Any) -> None:
    """Keep a plan for the call spec ``spec`` of a call that just ran ``ck`` (the compiled
    kernel the full path found for these arguments), if the full path keeps a guard for it."""
    global _TRACING, _memory_get, _K0, _K1, _K2, _PLANS
    if spec is None:
        return
    from . import warm
    from ..errors import NKIError
    from ..frontend.context import _ACTIVE
    from ..passes.output_coverage import ENV as OUTPUT_CHECK_ENV
    from ..runtime import cache
    from ..runtime.program import HAZARDS_ENV, resolve_mode
    from ..targets import TARGET_ENV, resolve_target
    _TRACING, _memory_get, _PLANS = _ACTIVE, cache.memory_get, warm.PLANS
    _K0, _K1, _K2 = (_ENV_KEY(n) for n in (TARGET_ENV, OUTPUT_CHECK_ENV, HAZARDS_ENV))
    opts = kernel.options
    try:
        skey = warm.spec_key(kernel.fn, args, kwargs, warm.options_key(
            resolve_target(opts.get("target")), opts.get("schedule", "list"), None,
            opts.get("output_check"), opts.get("spill", True), ck.stage))
    except (TypeError, NKIError):
        return
    g = warm._GUARDS.get(skey) if skey is not None else None
    if g is None or _memory_get(g.key) is not ck:
        return
    names = [a.name for a in ck.spec.args]
    slots = {n: i for i, n in enumerate(names[:len(args)])}
    for j, k in enumerate(kwargs):
        slots[k] = len(args) + j
    picks = []
    for a in ck.spec.args:
        if a.kind == "tensor":
            if a.name not in slots:
                return
            picks.append(slots[a.name])
    prog = ck.program
    if len(picks) != len(prog.arg_types) or any(space is None for _, _, space in prog.arg_types):
        return        # scalar program arguments: converted by Program.run on every call
    if len(_PLANS) >= MAX_PLANS:
        _PLANS.clear()
    mode, hazards = resolve_mode(None, None)
    _PLANS[spec] = Plan(g, ck, tuple(picks), opts, _env_snapshot(), mode, hazards)


def clear() -> None:
    """Forget every plan."""
    _PLANS.clear()
