"""The estimated timeline as a Chrome / Perfetto trace-event file.

Format: the JSON *object* form of the Chrome trace-event format ("Trace Event Format",
the document Perfetto's legacy JSON importer and ``chrome://tracing`` read)::

    {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...summary...}}

* one process (``pid`` 1) per kernel, named ``"<kernel> (<target>, estimated)"``;
* one thread (``tid``) per engine queue, named after the queue and ordered ``tensor``,
  ``vector``, ``scalar``, ``gpsimd``, ``dma0``, ``dma1``, ... then anything else;
* one complete event (``"ph": "X"``) per dynamic instruction instance with ``ts`` and
  ``dur`` in **microseconds** (floats; the format's unit), ``cat`` the engine kind and
  ``args`` the operands, the kernel source line and the dependency it waited on.

Open the file at https://ui.perfetto.dev or ``chrome://tracing``.  The times are the cost
model's (:mod:`.estimate`), never a measurement.
"""
from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path

from ..errors import NKIError
from .estimate import ENGINES, Estimate, Slice

#: the process id of the kernel in the trace
PID = 1

#: slices overlapping by more than this many microseconds on one thread are reported
OVERLAP_EPS_US = 1e-6

#: every ``ph`` value the trace-event format defines
KNOWN_PHASES = frozenset("B E X i I C b n e s t f P N O D M V v R c ( ) S T p F".split())

#: keys every event of a phase must have (phases not listed: ``ph`` and ``ts``)
REQUIRED_KEYS = {
    "X": ("name", "ph", "ts", "dur", "pid", "tid"),
    "M": ("name", "ph", "pid", "args"),
    "B": ("name", "ph", "ts", "pid", "tid"),
    "E": ("ph", "ts", "pid", "tid"),
}

_MAX_PROBLEMS_PER_KIND = 20
_DMA_RE = re.compile(r"^dma(\d+)$")
_SHAPE_RE = re.compile(r"^\d+(?:x\d+)*x[a-z][a-z0-9_]*$")


def track_sort_key(track: str) -> tuple:
    """Display order of a queue name: :data:`ENGINES` order, then ``dma<N>`` by N, then
    every other name alphabetically."""
    if track in ENGINES:
        return (0, ENGINES.index(track), "")
    m = _DMA_RE.match(track)
    if m:
        return (1, int(m.group(1)), "")
    return (2, 0, track)


def ordered_tracks(est: Estimate) -> list[str]:
    """Every queue of ``est`` (its :class:`TrackStats` and the tracks of its slices), in
    display order (:func:`track_sort_key`)."""
    names = {t.track for t in est.tracks} | {s.track for s in est.slices}
    return sorted(names, key=track_sort_key)


def engine_kind(track: str) -> str:
    """The engine kind of a queue: ``tensor`` / ``vector`` / ``scalar`` / ``gpsimd`` /
    ``dma`` (for ``dma<N>``), else the queue name itself (e.g. ``program``)."""
    if _DMA_RE.match(track) or track == "dma":
        return "dma"
    return track


def short_op_name(name: str) -> str:
    """``nisa.matmul`` -> ``matmul`` (the dialect prefix dropped)."""
    return name[5:] if name.startswith("nisa.") else name


def _operand_shapes(label: str) -> tuple[str | None, list[str]]:
    """(dst shape, other operand shapes) parsed from a label such as
    ``dst=128x512xf32@psum stationary=128x128xbf16@sbuf moving=128x512xbf16@sbuf``."""
    dst, others = None, []
    for token in label.split():
        key, eq, value = token.partition("=")
        if not eq:
            continue
        shape = value.split("@", 1)[0]
        if not _SHAPE_RE.match(shape):
            continue
        if key == "dst" and dst is None:
            dst = shape
        elif shape not in others:
            others.append(shape)
    return dst, others


def shape_hint(label: str, limit: int = 3) -> str:
    """A short operand-shape summary of an operands label: ``"128x128xbf16, 128x512xbf16 ->
    128x512xf32"``; a single shape if all operands agree; "" if the label names none."""
    dst, others = _operand_shapes(label)
    ins = others[:limit]
    if dst is None:
        return ", ".join(ins)
    if not ins or ins == [dst]:
        return dst
    return f"{', '.join(ins)} -> {dst}"


def slice_title(s: Slice) -> str:
    """The display name of a slice: op name without ``nisa.`` plus its shape hint."""
    hint = shape_hint(s.label)
    base = short_op_name(s.name)
    return f"{base} {hint}" if hint else base


def _finite(x: float | int | None):
    """``x`` if it is a finite number, else None (JSON has no inf / nan)."""
    if x is None:
        return None
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(xf) else None


def summary(est: Estimate) -> dict:
    """The headline figures of ``est`` as a JSON-ready dict (times in ns and us)."""
    return {
        "kernel": est.kernel,
        "target": est.target,
        "schedule": est.schedule,
        "model": "nki-mlir cycle-approximate cost model (an estimate, not a measurement)",
        "latency_ns": _finite(est.latency_ns),
        "latency_us": _finite(est.latency_us),
        "bound_ns": _finite(est.bound_ns),
        "bound_kind": est.bound_kind,
        "bounds_ns": {k: _finite(v) for k, v in est.bounds.items()},
        "ratio": _finite(est.ratio),
        "mfu_pct": _finite(est.mfu_pct),
        "mbu_pct": _finite(est.mbu_pct),
        "matmul_flops": _finite(est.matmul_flops),
        "dma_bytes": est.dma_bytes,
        "hbm_bytes": est.hbm_bytes,
        "dma_count": est.dma_count,
        "avg_dma_bytes": _finite(est.avg_dma_bytes),
        "instructions": est.instructions,
        "tracks": [{"track": t.track, "busy_ns": _finite(t.busy_ns),
                    "busy_pct": _finite(t.busy_pct), "instructions": t.instructions,
                    "wait_dma_ns": _finite(t.wait_dma_ns)} for t in est.tracks],
        "critical_path": [{"name": c.name, "loc": c.loc, "source": c.source, "track": c.track,
                           "time_ns": _finite(c.time_ns), "instances": c.instances,
                           "pct": _finite(c.pct)} for c in est.critical_path],
        "warnings": [{"kind": w.kind, "message": w.message, "loc": w.loc}
                     for w in est.warnings],
        "notes": list(est.notes),
        "slices": len(est.slices),
    }


def trace_events(est: Estimate, max_slices: int | None = None) -> dict:
    """The Chrome trace-event JSON object of ``est``'s timeline.

    Returns ``{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": summary}``:
    metadata events (``ph "M"``: ``process_name``, ``thread_name``, ``thread_sort_index``)
    then one ``ph "X"`` event per :class:`Slice`, sorted by start, with ``ts`` / ``dur`` in
    microseconds (``start_ns / 1000``, ``(end_ns - start_ns) / 1000``), ``tid`` the 1-based
    position of its queue in :func:`ordered_tracks`, ``cat`` its engine kind and ``args``
    ``{operands, source ("file:line"), line (source text), waited_on, bytes, flops,
    instance}``.  With ``max_slices``, only the first that many slices (by start) are
    kept and ``otherData["truncated"]`` is ``{"kept": N, "total": all}``.  Doc: the Chrome
    "Trace Event Format" (JSON object format, complete and metadata events).
    """
    tracks = ordered_tracks(est)
    tids = {name: i + 1 for i, name in enumerate(tracks)}
    events: list[dict] = [{
        "name": "process_name", "ph": "M", "pid": PID,
        "args": {"name": f"{est.kernel} ({est.target}, estimated)"},
    }, {
        "name": "process_sort_index", "ph": "M", "pid": PID, "args": {"sort_index": 0},
    }]
    for name in tracks:
        tid = tids[name]
        events.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
                       "args": {"name": name}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid,
                       "args": {"sort_index": tid}})
    titles: dict[tuple[str, str], str] = {}
    ordered = sorted(est.slices, key=lambda s: (s.start_ns, tids[s.track]))
    if max_slices is not None:
        ordered = ordered[:max_slices]
    for s in ordered:
        key = (s.name, s.label)
        title = titles.get(key)
        if title is None:
            title = titles[key] = slice_title(s)
        events.append({
            "name": title,
            "cat": engine_kind(s.track),
            "ph": "X",
            "ts": s.start_ns / 1e3,
            "dur": max(s.end_ns - s.start_ns, 0.0) / 1e3,
            "pid": PID,
            "tid": tids[s.track],
            "args": {
                "operands": s.label,
                "source": s.loc,
                "line": s.source,
                "waited_on": s.waited_on,
                "bytes": s.bytes,
                "flops": _finite(s.flops),
                "instance": s.index,
            },
        })
    other = summary(est)
    if max_slices is not None and max_slices < len(est.slices):
        other["truncated"] = {"kept": max_slices, "total": len(est.slices)}
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}


def atomic_write(path, text: str, what: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same directory and
    ``os.replace`` (readers never see a half-written file).  NKIError if it cannot."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a trace is an ordinary readable file
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise NKIError(f"cannot write the {what} to {str(path)!r}: {e.strerror or e}",
                       category="profile output") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


#: a trace larger than this many bytes is announced with a warning before it is written
WARN_BYTES = 100 * 1024 * 1024


def write_trace(est: Estimate, path, max_slices: int | None = None) -> Path:
    """Write :func:`trace_events` of ``est`` as JSON to ``path`` (atomically: a temporary
    file then ``os.replace``; parent directories are created) and return it as a
    :class:`~pathlib.Path`.

    ``max_slices`` (default ``$NKI_MLIR_TRACE_MAX_SLICES``, else all) keeps only the first
    that many slices by start time (``otherData.truncated`` records it).  A trace over
    :data:`WARN_BYTES` (100 MiB) is announced with an ``NKIProfileWarning`` naming the file,
    its size and the cap, before it is written.

    Raises:
        NKIError: the file cannot be written.
    """
    if max_slices is None and os.environ.get("NKI_MLIR_TRACE_MAX_SLICES"):
        try:
            max_slices = max(0, int(os.environ["NKI_MLIR_TRACE_MAX_SLICES"]))
        except ValueError:
            raise NKIError(f"NKI_MLIR_TRACE_MAX_SLICES={os.environ['NKI_MLIR_TRACE_MAX_SLICES']!r}: "
                           f"expected an integer", category="bad option") from None
    obj = trace_events(est, max_slices)
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    if len(text) > WARN_BYTES:
        import warnings

        from ..errors import NKIProfileWarning
        warnings.warn(NKIProfileWarning(
            f"writing a {len(text) / 2**20:.0f} MiB trace of {len(est.slices)} slices to {path}; "
            f"NKI_MLIR_TRACE_MAX_SLICES=N (or max_slices=N) keeps only the first N slices"), stacklevel=2)
    return atomic_write(path, text, "trace")


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class _Problems:
    """Collects problem messages, at most a few per kind, then a count of the rest."""

    def __init__(self):
        self.items: list[str] = []
        self.counts: dict[str, int] = {}

    def add(self, kind: str, message: str) -> None:
        n = self.counts.get(kind, 0) + 1
        self.counts[kind] = n
        if n <= _MAX_PROBLEMS_PER_KIND:
            self.items.append(message)

    def result(self) -> list[str]:
        out = list(self.items)
        for kind, n in self.counts.items():
            if n > _MAX_PROBLEMS_PER_KIND:
                out.append(f"... and {n - _MAX_PROBLEMS_PER_KIND} more {kind} problems")
        return out


def validate_trace(obj, est: Estimate | None = None) -> list[str]:
    """Problems of a trace-event JSON value (``[]`` = valid).

    Accepts what ``json.load`` gives for any trace file (the object form, or the array
    form, which is reported for lacking ``displayTimeUnit``).  Checks: ``traceEvents`` is
    a list of objects; ``displayTimeUnit`` is present (``"ns"`` or ``"ms"``); every event
    has a known ``ph`` and the keys its phase requires (:data:`REQUIRED_KEYS`: ``X`` needs
    name, ph, ts, dur, pid, tid; ``M`` needs name, ph, pid, args); ``ts`` / ``dur`` are
    finite non-negative numbers; complete (``X``) events on one (pid, tid) do not overlap
    by more than :data:`OVERLAP_EPS_US` microseconds; ``thread_name`` / ``process_name``
    metadata carry ``args.name``.  Microsecond units: if ``otherData.latency_ns`` (or
    ``est``) is given, no slice may end after ``latency_ns / 1000`` us (ns-valued
    timestamps would end ~1000x later), and with ``est`` the number of ``X`` events must
    equal ``len(est.slices)``.  At most 20 messages per kind of problem, then a count.
    """
    p = _Problems()
    if isinstance(obj, list):
        events = obj
        p.add("displayTimeUnit", "displayTimeUnit missing (JSON array form has no metadata)")
        other = {}
    elif isinstance(obj, dict):
        events = obj.get("traceEvents")
        if "traceEvents" not in obj:
            p.add("traceEvents", "traceEvents missing")
            events = []
        elif not isinstance(events, list):
            p.add("traceEvents", "traceEvents is not a list")
            events = []
        if "displayTimeUnit" not in obj:
            p.add("displayTimeUnit", "displayTimeUnit missing")
        elif obj["displayTimeUnit"] not in ("ns", "ms"):
            p.add("displayTimeUnit",
                  f"displayTimeUnit is {obj['displayTimeUnit']!r}, expected 'ns' or 'ms'")
        other = obj.get("otherData") if isinstance(obj.get("otherData"), dict) else {}
    else:
        return [f"a trace is a JSON object or array, got {type(obj).__name__}"]

    slices: dict[tuple, list[tuple[float, float, int]]] = {}
    max_end = 0.0
    n_x = 0
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            p.add("event", f"event {i}: not an object")
            continue
        ph = ev.get("ph")
        if ph is None:
            p.add("missing key", f"event {i}: missing key 'ph'")
            continue
        if ph not in KNOWN_PHASES:
            p.add("unknown ph", f"event {i}: unknown ph {ph!r}")
            continue
        required = REQUIRED_KEYS.get(ph, ("ph", "ts"))
        missing = [k for k in required if k not in ev]
        if missing:
            p.add("missing key", f"event {i} (ph {ph!r}): missing key(s) {', '.join(missing)}")
        for key in ("ts", "dur"):
            if key not in ev:
                continue
            v = ev[key]
            if not _is_number(v):
                p.add("bad number", f"event {i} (ph {ph!r}): {key} is not a number: {v!r}")
            elif not math.isfinite(v):
                p.add("bad number", f"event {i} (ph {ph!r}): {key} is not finite: {v!r}")
            elif v < 0:
                p.add("negative", f"event {i} (ph {ph!r}): negative {key} {v!r}")
        if ph == "M":
            args = ev.get("args")
            if "args" in ev and not isinstance(args, dict):
                p.add("metadata", f"event {i}: metadata args is not an object")
            elif ev.get("name") in ("process_name", "thread_name") and isinstance(args, dict) \
                    and not isinstance(args.get("name"), str):
                p.add("metadata", f"event {i}: {ev.get('name')} without a string args.name")
            if ev.get("name") == "thread_name" and "tid" not in ev:
                p.add("missing key", f"event {i} (thread_name): missing key tid")
        if ph == "X" and not missing:
            ts, dur = ev["ts"], ev["dur"]
            if _is_number(ts) and _is_number(dur) and math.isfinite(ts) \
                    and math.isfinite(dur) and ts >= 0 and dur >= 0:
                n_x += 1
                slices.setdefault((ev["pid"], ev["tid"]), []).append((ts, ts + dur, i))
                max_end = max(max_end, ts + dur)

    for (pid, tid), items in slices.items():
        items.sort()
        prev_end, prev_i = -math.inf, -1
        for ts, end, i in items:
            if ts < prev_end - OVERLAP_EPS_US:
                p.add("overlap", f"pid {pid} tid {tid}: event {i} starts at {ts:g} us before "
                                 f"event {prev_i} ends at {prev_end:g} us (overlap)")
            if end > prev_end:
                prev_end, prev_i = end, i

    latency_ns = est.latency_ns if est is not None else other.get("latency_ns")
    if _is_number(latency_ns) and math.isfinite(latency_ns) and n_x:
        limit = latency_ns / 1e3
        if max_end > limit * (1 + 1e-9) + OVERLAP_EPS_US:
            p.add("units", f"slices end at {max_end:g} us, after the latency {limit:g} us "
                           f"({latency_ns:g} ns): ts/dur must be microseconds")
    if est is not None and n_x != len(est.slices):
        p.add("count", f"{n_x} valid X events for {len(est.slices)} slices of the estimate")
    return p.result()
