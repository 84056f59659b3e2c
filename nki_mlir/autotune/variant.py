"""One variant of a sweep: compile it, estimate it with the cost model, optionally run it
on the ISA interpreter (hazard checks on) and compare its outputs with the reference.

:func:`evaluate` runs in whichever process evaluates the variant (the driver, a process
pool worker or a Ray task) and returns a plain dict (see :class:`.result.Row` for the
fields), never raising for a bad variant: a compile error, a faulting run or an output
mismatch is the variant's ``status`` and ``reason``.
"""
from __future__ import annotations

import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import NKIError

#: default comparison tolerance by output dtype kind: relative, and absolute as a share of
#: the reference's largest magnitude (sums in another order round differently)
_TOL_BY_ITEMSIZE = {1: 0.25, 2: 3e-2, 4: 1e-3, 8: 1e-6}


@dataclass
class Options:
    """What every variant of one sweep shares (shipped once to each worker).

    Attributes:
        arrays: the tensor arguments.  consts: fixed compile-time keyword arguments.
        target / schedule: compiler options (None: the defaults).
        check: run each variant on the interpreter and compare with ``reference``.
        hazards: run with the engine-queue hazard checks.
        rtol / atol: comparison tolerance (None: by dtype, see :func:`compare`).
    """

    arrays: list
    consts: dict = field(default_factory=dict)
    target: str | None = None
    schedule: str | None = None
    check: bool = True
    hazards: bool = True
    rtol: float | None = None
    atol: float | None = None


def evaluate(kernel: Any, params: dict, opts: Options, reference: tuple | None = None,
             want_outputs: bool = False) -> dict:
    """Evaluate one variant; returns the row dict (``status`` ``ok`` / ``mismatch`` /
    ``compile error`` / ``run error`` / ``internal error``) and, with ``want_outputs``
    and a run, ``"outputs"`` (the arrays, for the driver's reference)."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {"params": dict(params), "status": "ok", "reason": "",
                           "checked": False}
    copts = {k: v for k, v in (("target", opts.target), ("schedule", opts.schedule)) if v}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            stage = "compile error"
            ck = kernel.compile_with(tuple(opts.arrays), {**opts.consts, **params}, **copts)
            mem = ck.manifest.get("memory") or {}
            row["sbuf_peak_bytes"] = mem.get("sbuf_peak_bytes")
            row["psum_peak_bytes"] = mem.get("psum_peak_bytes")
            row["compile_seconds"] = ck.compile_seconds
            stage = "run error"      # estimate() executes a kernel whose control flow reads state
            est = ck.estimate(*opts.arrays, keep_slices=False)
            row.update(latency_ns=est.latency_ns, bound_ns=est.bound_ns, bound_kind=est.bound_kind,
                       ratio=est.ratio, mfu_pct=est.mfu_pct,
                       utilisation={t.track: round(t.busy_pct, 2) for t in est.tracks})
            if opts.check:
                outs = ck.run(tuple(opts.arrays), {}, hazards=opts.hazards)
                row["checked"] = reference is not None
                if reference is not None:
                    why = compare(outs, reference, opts.rtol, opts.atol, ck.spec.outputs)
                    if why:
                        row.update(status="mismatch", reason=why)
                if want_outputs:
                    row["outputs"] = tuple(np.asarray(o) for o in outs)
        except NKIError as exc:
            row.update(status=stage, reason=str(exc))
        except Exception as exc:      # a compiler bug must not end the sweep
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            row.update(status="internal error",
                       reason=f"internal error (a compiler bug): {type(exc).__name__}: {exc} "
                              f"(at {tb.filename}:{tb.lineno})")
    row["warnings"] = sorted({str(w.message).splitlines()[0] for w in caught})
    row["seconds"] = time.perf_counter() - t0
    return row


def compare(outs: tuple, reference: tuple, rtol: float | None, atol: float | None,
            specs: tuple = ()) -> str | None:
    """None when every output matches ``reference``, else why not.

    Floating outputs match when ``|out - ref| <= atol + rtol * |ref|`` everywhere; by
    default ``rtol`` is 1e-3 for 32-bit, 3e-2 for 16-bit and 0.25 for 8-bit floats and
    ``atol`` is ``rtol`` times the reference's largest magnitude.  Integer and boolean
    outputs match exactly."""
    if len(outs) != len(reference):
        return f"{len(outs)} outputs, the reference has {len(reference)}"
    for i, (o, r) in enumerate(zip(outs, reference)):
        o, r = np.asarray(o), np.asarray(r)
        name = f"output {i}" + (f" ({specs[i].name!r})" if i < len(specs) else "")
        if o.shape != r.shape:
            return f"{name}: shape {list(o.shape)}, the reference's is {list(r.shape)}"
        if r.dtype.kind in "biu" and o.dtype.kind in "biu":
            bad = o != r
            tol_text = "exact"
        else:
            of, rf = o.astype(np.float64), r.astype(np.float64)
            rt = rtol if rtol is not None else _TOL_BY_ITEMSIZE.get(min(o.dtype.itemsize, r.dtype.itemsize), 1e-3)
            scale = float(np.nanmax(np.abs(rf))) if rf.size else 0.0
            at = atol if atol is not None else rt * (scale if np.isfinite(scale) else 0.0)
            with np.errstate(invalid="ignore"):
                bad = ~(np.abs(of - rf) <= at + rt * np.abs(rf)) & ~(np.isnan(of) & np.isnan(rf))
            tol_text = f"rtol={rt:g}, atol={at:.3g}"
        n = int(np.count_nonzero(bad))
        if n:
            idx = np.unravel_index(int(np.argmax(bad)), bad.shape)
            where = ", ".join(map(str, idx))
            return (f"{name}: {n} of {bad.size} elements differ from the reference ({tol_text}); "
                    f"first at [{where}]: got {_scalar(o[idx])}, expected {_scalar(r[idx])}")
    return None


def _scalar(x) -> str:
    """An element as plain text (``0.456``, ``nan``, ``3``), not a NumPy repr."""
    try:
        return repr(int(x)) if np.asarray(x).dtype.kind in "biu" else f"{float(x):.6g}"
    except (TypeError, ValueError):
        return str(x)
