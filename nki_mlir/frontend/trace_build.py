"""Trace a kernel: run its Python on proxies, retrace with loops unrolled where needed.

:func:`trace` runs the kernel (its loops rewritten by :mod:`.loop_rewrite`) with
:class:`~.proxies.NkiTensor` arguments under a fresh :class:`~.tracer.TraceContext`.  A
:class:`~.tracer.Retrace` names loops that cannot stay rolled.  The rewritten ``for`` of an
enclosing rolled loop traces itself again in place when it can (:mod:`.loop_retry`); a
``Retrace`` that reaches this function has the kernel traced
again from scratch with those loops unrolled (each retrace unrolls at least one more
source loop, so there are at most as many retraces as loops).  The loops a trace had to
unroll are remembered under the caller's ``unroll_key`` (the other program instances of one
launch: same kernel, arguments and target, another ``nl.program_id``), and the next trace
under that key starts with them unrolled instead of rediscovering them one retrace at a
time; unrolling a loop that could have stayed rolled changes only the IR's size, never
its meaning.  Python exceptions raised
by the kernel's own code become located ``NKIError``\\ s; an exception raised inside
nki-mlir is reported as an internal compiler error.

Environment:
    NKI_MLIR_LOOPS: ``auto`` (default), ``unroll`` (every loop), ``roll`` (a loop that
        cannot stay rolled is an error saying why).
    NKI_MLIR_EXPLAIN_LOOPS: when set, print each loop's decision and reason to stderr.
"""
from __future__ import annotations

import ast
import linecache
import os
import sys
from typing import Any, Callable

from ..errors import NKIError, NKISyntaxError
from .frames import call_chain, tb_loc, traceback_user_frame
from .loop_rewrite import restore_helpers, rewrite_helpers, traced_function
from .loops import explain
from .proxies import NkiTensor
from .tracer import _ACTIVE, LAUNCH_KEY, Retrace, TraceContext, unwrap, wrap
from .values import Tensor

_MODES = ("auto", "unroll", "roll")


def loop_mode() -> str:
    mode = os.environ.get("NKI_MLIR_LOOPS", "auto") or "auto"
    if mode not in _MODES:
        raise NKIError(f"NKI_MLIR_LOOPS={mode!r}: expected one of {', '.join(_MODES)}",
                       category="bad option")
    return mode


#: the loop report of the last kernel traced by this process (see :func:`last_loop_report`)
_LAST_REPORT: dict[str, tuple[str, str]] = {}


def last_loop_report() -> dict[str, tuple[str, str]]:
    """``{"file:line:col": ("rolled" | "unrolled", why)}`` of the last traced kernel, and
    ``{LAUNCH_KEY: ("traced per instance", why)}`` for a launch whose program id had to be a
    Python value (frontend/spmd.py)."""
    return dict(_LAST_REPORT)


#: loops unrolled by the last traces, by ``unroll_key`` (at most :data:`_HINTS_KEPT` keys)
_UNROLL_HINTS: dict[str, dict[str, str]] = {}
_HINTS_KEPT = 64


def trace(make_kernel: Callable[[], Any], unroll_key: str | None = None):
    """Trace the kernel ``make_kernel()`` prepares; returns ``(kernel, result, return loc)``
    for :func:`~nki_mlir.frontend.build_module` to finish (the outputs were checked visible
    at the return).  ``unroll_key``: traces under one key start with the loops the last of
    them had to unroll (see the module docstring)."""
    mode = loop_mode()
    # (not in "roll" mode, where a loop that cannot stay rolled must be an error)
    hinted = unroll_key is not None and mode == "auto"
    unroll: dict[str, str] = dict(_UNROLL_HINTS.get(unroll_key, {})) if hinted else {}
    first = True
    while True:
        known = set(unroll)     # (loops retried in place join ``unroll`` during the trace)
        k = make_kernel()
        if first:
            first = False
            why = _PER_INSTANCE.get(_code_key(k.fn))
            if why is not None and spmd_symbolic(k.b):
                unroll.setdefault(LAUNCH_KEY, why)
        ctx = TraceContext(k.b, k.src, unroll, mode)
        fn = traced_function(k.fn)
        ctx.kernel_code = fn.__code__
        args = [wrap(k.scope[s.name]) for s in k.specs]
        ret = _last_return(k.src.node)
        ret_loc = k.src.loc(ret) if ret is not None else None
        _ACTIVE.append(ctx)
        swaps = rewrite_helpers(k.fn)
        try:
            result = unwrap(fn(*args))
            for o in (result if isinstance(result, (tuple, list)) else [result]):
                if isinstance(o, Tensor):
                    ctx.check_visible(ret_loc, o)
            if ctx.open_whiles:
                raise NKISyntaxError("a device 'while' loop was left by break or return", ret_loc)
        except Retrace as r:
            fresh = {key: why for key, why in r.loops.items() if key not in known}
            if not fresh:
                raise NKIError(f"internal compiler error: the tracer asked to unroll loops that "
                               f"are already unrolled ({', '.join(r.loops)})",
                               category="internal error") from None
            unroll.update({key: why for key, why in fresh.items() if key not in unroll})
            continue
        except NKIError as exc:
            if _per_instance_first(k.b, unroll, exc):
                continue
            raise exc.relocate(ctx.b.loc) from None
        except RecursionError:
            raise NKIError("recursion too deep while running the kernel's Python", ctx.b.loc) from None
        except Exception as exc:
            if _per_instance_first(k.b, unroll, exc):
                continue
            raise python_error(exc, ctx) from exc
        finally:
            restore_helpers(swaps)
            _ACTIVE.pop()
        break
    if hinted and unroll:
        _UNROLL_HINTS.pop(unroll_key, None)
        _UNROLL_HINTS[unroll_key] = dict(unroll)
        while len(_UNROLL_HINTS) > _HINTS_KEPT:
            del _UNROLL_HINTS[next(iter(_UNROLL_HINTS))]
    if LAUNCH_KEY in unroll:
        ctx.decisions[LAUNCH_KEY] = ("traced per instance", unroll[LAUNCH_KEY])
        _PER_INSTANCE[_code_key(k.fn)] = unroll[LAUNCH_KEY]
        while len(_PER_INSTANCE) > _HINTS_KEPT:
            del _PER_INSTANCE[next(iter(_PER_INSTANCE))]
    _LAST_REPORT.clear()
    _LAST_REPORT.update(ctx.decisions)
    if os.environ.get("NKI_MLIR_EXPLAIN_LOOPS") and ctx.decisions:
        print(f"nki-mlir loops of {k.fn.__name__}:\n{explain(ctx.decisions)}", file=sys.stderr)
    return k, result, ret_loc


#: kernels whose launch had to be traced per instance, by code: their next symbolic trace
#: (another shape) starts per instance instead of finding out again (only speed depends
#: on it: a per-instance trace means what a symbolic one does)
_PER_INSTANCE: dict[tuple, str] = {}


def _code_key(fn: Any) -> tuple:
    code = getattr(fn, "__code__", None)
    return (getattr(code, "co_filename", ""), getattr(code, "co_firstlineno", 0),
            getattr(fn, "__qualname__", repr(fn)))


def _per_instance_first(b, unroll: dict, exc: BaseException) -> bool:
    """A trace that handed out a symbolic program id failed: trace per instance before
    reporting anything, since the failure may come from the symbolic id itself (a C
    function that type-checks its ``str`` argument, ``"".join([..., f"x{pid}"])``, never
    calls the dunders that would ask for its value).  A genuine error fails the same way
    per instance and is reported from there.  True when ``unroll`` got the launch."""
    if not b.program_ids or LAUNCH_KEY in unroll:
        return False
    first = str(getattr(exc, "message", exc)).split("\n")[0][:120]
    unroll[LAUNCH_KEY] = (f"the trace with a symbolic nl.program_id failed "
                          f"({type(exc).__name__}: {first})")
    return True


def spmd_symbolic(b) -> bool:
    """The trace asked for symbolic program ids (frontend/spmd.py)."""
    info = getattr(b, "spmd", None)
    return info is not None and info.symbolic


def python_error(exc: BaseException, ctx: TraceContext) -> NKIError:
    """A Python exception raised while the kernel ran, as a located NKIError."""
    frame, internal = traceback_user_frame(exc.__traceback__)
    if internal or frame is None:
        return NKIError(f"internal compiler error: {type(exc).__name__}: {exc} (please report "
                        f"this; the traceback follows)", ctx.b.loc, category="internal error")
    loc = tb_loc(exc.__traceback__, frame)
    chain = call_chain(frame, ctx.kernel_code)
    line = linecache.getline(loc.file, loc.line).strip()
    if isinstance(exc, AssertionError):
        msg = str(exc) or line.removeprefix("assert").strip()
        err = NKIError(f"assertion failed: {msg}", loc, category="assertion")
    elif line.startswith("raise"):
        err = NKIError(f"kernel raised {exc!r}", loc, category="kernel error")
    else:
        err = NKIError(f"{type(exc).__name__}: {exc}", loc, category="compile-time evaluation error")
    return err.relocate(chain=chain)


_RETURNS: dict[int, "ast.Return | None"] = {}


def _last_return(node: ast.FunctionDef) -> ast.Return | None:
    """The last ``return`` of the kernel's own body (not of functions nested in it)."""
    key = id(node)
    if key not in _RETURNS:
        last, stack = None, list(reversed(node.body))
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Return):
                last = n if last is None or (n.lineno, n.col_offset) > (last.lineno, last.col_offset) else last
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.extend(ast.iter_child_nodes(n))
        _RETURNS[key] = last
    return _RETURNS[key]


__all__ = ["trace", "last_loop_report", "loop_mode", "NkiTensor"]
