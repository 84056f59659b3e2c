"""The estimated timeline as one self-contained HTML page.

:func:`render_html` returns a single HTML document (inline CSS and JavaScript, the slices
embedded as JSON in a ``<script type="application/json">`` element, no network fetches)
that shows:

* a header (kernel, target, schedule) and the summary figures of the :class:`Estimate`
  (latency, roofline bound and its term, ratio, MFU, MBU, DMA bytes and average size);
* a timeline with a time axis and one row per engine queue, in the order of
  :func:`.trace.ordered_tracks`: each row is a static ``<div class="track"
  data-track="NAME">`` holding a label and a ``<canvas>`` the script draws the slices into
  (coloured by engine kind; only the visible slices are visited, found by binary search,
  so ~100k slices stay responsive).  Hover a slice for its name, operands, source line,
  start / duration and the dependency it waited on; mouse wheel zooms, drag pans,
  double-click fits;
* per-queue busy time, the roofline terms, the critical path with its source lines, the
  warnings and notes.

After drawing, the script sets ``data-drawn="<slices in view>"`` on every canvas and on
``<body>`` (their sum), then ``data-ready="1"`` on ``<body>`` (tests read them from the
DOM).  Opening the page with ``#hover=<track>,<i>`` shows the tooltip of the ``i``-th slice
(by start) of that queue.  Slices narrower than 1.5 px are drawn as a per-pixel busy bar
(height = fraction of the pixel's time the queue was busy).  The times are the cost
model's (:mod:`.estimate`), never a measurement.
"""
from __future__ import annotations

import html as _html
import json
import math
import re

from .estimate import Estimate
from .html_assets import CSS, JS
from .trace import (atomic_write, engine_kind, ordered_tracks, short_op_name, slice_title,
                    track_sort_key)

_URL_RE = re.compile(r"://")
_SRC_RE = re.compile(r"(?i)(src)=")


def _h(text) -> str:
    """HTML-escape ``text`` for element content and quoted attributes.  Besides ``& < > " '``
    it writes ``://`` and ``src=`` with character references so that no text of the kernel
    (a URL in a comment, a ``src=`` operand) can read as a resource reference."""
    s = _html.escape(str(text), quote=True)
    s = _URL_RE.sub(":&#47;&#47;", s)
    return _SRC_RE.sub(r"\1&#61;", s)


def _script_json(obj) -> str:
    """``obj`` as JSON safe inside a ``<script>`` element: ``< > & / =`` and the JS line
    separators are written as escapes (inside JSON strings, the only place they occur), so
    no ``</script>``, ``<!--``, URL or ``src=`` can appear in the page text."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("/", "\\/").replace("=", "\\u003d")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _num(x, default: float = 0.0) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


def _fmt_us(ns) -> str:
    """ns -> ``"12.345 µs"`` (3 decimals; more below 0.01 µs)."""
    us = _num(ns) / 1e3
    if us != 0 and abs(us) < 0.01:
        return f"{us:.5f} µs"
    return f"{us:,.3f} µs"


def _fmt_bytes(n) -> str:
    n = _num(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def _fmt_pct(x) -> str:
    return f"{_num(x):.1f} %"


def _fmt_ratio(x) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "n/a"
    return f"{x:.2f}×" if math.isfinite(x) and x > 0 else "n/a"


def _timeline_data(est: Estimate, tracks: list[str]) -> dict:
    """The JSON the script draws: per track, columns of start / end ns, op index, waited-on
    index (-1 = none) and instance number, sorted by start; shared op and wait tables."""
    ops: list[list] = []
    op_index: dict[tuple, int] = {}
    waits: list[str] = []
    wait_index: dict[str, int] = {}
    cols = {name: {"s": [], "e": [], "o": [], "w": [], "i": []} for name in tracks}
    for sl in sorted(est.slices, key=lambda s: s.start_ns):
        key = (sl.name, sl.label, sl.loc, sl.source, sl.bytes, sl.flops)
        oi = op_index.get(key)
        if oi is None:
            oi = op_index[key] = len(ops)
            ops.append([slice_title(sl), short_op_name(sl.name), sl.label, sl.loc, sl.source,
                        int(sl.bytes), _num(sl.flops)])
        wi = -1
        if sl.waited_on:
            wi = wait_index.get(sl.waited_on)
            if wi is None:
                wi = wait_index[sl.waited_on] = len(waits)
                waits.append(sl.waited_on)
        c = cols[sl.track]
        start = round(_num(sl.start_ns), 3)
        c["s"].append(start)
        c["e"].append(max(round(_num(sl.end_ns), 3), start))
        c["o"].append(oi)
        c["w"].append(wi)
        c["i"].append(sl.index)
    end = max([_num(est.latency_ns)] + [c["e"][-1] for c in cols.values() if c["e"]])
    busy = {t.track: _num(t.busy_pct) for t in est.tracks}
    return {
        "kernel": est.kernel, "target": est.target, "schedule": est.schedule,
        "end_ns": end,
        "tracks": [dict(name=name, kind=engine_kind(name), busy_pct=busy.get(name, 0.0),
                        **cols[name]) for name in tracks],
        "ops": ops,
        "waits": waits,
    }


def _card(title: str, value: str, sub: str = "", cls: str = "") -> str:
    sub_html = f'<div class="sub">{_h(sub)}</div>' if sub else ""
    return (f'<div class="card {cls}"><div class="ct">{_h(title)}</div>'
            f'<div class="cv">{_h(value)}</div>{sub_html}</div>')


def _summary_html(est: Estimate) -> str:
    bound_sub = f"{est.bound_kind}-bound" if est.bound_kind else ""
    dma_sub = f"{est.dma_count} DMAs, avg {_fmt_bytes(est.avg_dma_bytes)}"
    cards = [
        _card("Estimated latency", _fmt_us(est.latency_ns), f"{est.instructions} instructions",
              "main"),
        _card("Roofline bound", _fmt_us(est.bound_ns), bound_sub),
        _card("Ratio to bound", _fmt_ratio(est.ratio), "latency / bound"),
        _card("MFU", _fmt_pct(est.mfu_pct), f"{_num(est.matmul_flops):.3g} matmul FLOPs"),
        _card("MBU", _fmt_pct(est.mbu_pct), "HBM bandwidth used"),
        _card("DMA bytes", _fmt_bytes(est.dma_bytes), dma_sub),
        _card("Warnings", str(len(est.warnings)), ", ".join(sorted({w.kind for w in est.warnings})),
              "warn" if est.warnings else ""),
    ]
    return '<section class="cards" id="summary">' + "".join(cards) + "</section>"


def _tracks_html(est: Estimate, tracks: list[str]) -> str:
    busy = {t.track: t for t in est.tracks}
    rows = []
    for name in tracks:
        st = busy.get(name)
        pct = f"{_num(st.busy_pct):.1f}%" if st else ""
        kind = engine_kind(name)
        rows.append(
            f'<div class="track" data-track="{_h(name)}" data-kind="{_h(kind)}">'
            f'<div class="tlabel" title="{_h(name)}"><span class="sw k-{_h(kind)}"></span>'
            f'<span class="tn">{_h(name)}</span><span class="tb">{_h(pct)}</span></div>'
            f'<canvas class="lane"></canvas></div>')
    empty = "" if est.slices else (
        '<div class="empty">No slices were kept for this estimate '
        "(estimate(..., keep_slices=False)); the summary figures are complete.</div>")
    return (
        '<section class="panel" id="timeline">'
        '<div class="toolbar"><b>Timeline</b>'
        '<button type="button" id="zin" title="zoom in (W)">+</button>'
        '<button type="button" id="zout" title="zoom out (S)">&minus;</button>'
        '<button type="button" id="zfit" title="fit (0 / double-click)">fit</button>'
        '<span id="range" class="muted"></span>'
        '<span class="muted hint">wheel: zoom · drag: pan · double-click: fit · '
        'W/S zoom, A/D pan</span></div>'
        '<div class="axisrow"><div class="tlabel axislabel">queue</div>'
        '<canvas id="axis"></canvas></div>'
        f'<div id="tracks">{"".join(rows)}</div>{empty}'
        '</section>')


def _table(cls: str, head: list[str], rows: list[list[str]], empty: str) -> str:
    if not rows:
        return f'<p class="muted">{_h(empty)}</p>'
    th = "".join(f"<th>{_h(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _source_cell(loc: str, source: str) -> str:
    loc_html = f'<span class="loc">{_h(loc)}</span>' if loc else ""
    src_html = f'<code>{_h(source)}</code>' if source else ""
    return loc_html + src_html or '<span class="muted">unknown</span>'


def _details_html(est: Estimate) -> str:
    busy_rows = []
    for t in sorted(est.tracks, key=lambda t: track_sort_key(t.track)):
        pct = max(0.0, min(100.0, _num(t.busy_pct)))
        kind = engine_kind(t.track)
        busy_rows.append([
            f'<span class="sw k-{_h(kind)}"></span>{_h(t.track)}',
            _h(str(t.instructions)),
            _h(_fmt_us(t.busy_ns)),
            f'<div class="bar"><div class="fill k-{_h(kind)}" style="width:{pct:.2f}%"></div>'
            f'<span>{_h(_fmt_pct(t.busy_pct))}</span></div>',
            _h(_fmt_us(t.wait_dma_ns)) if t.wait_dma_ns else "",
        ])
    busy = _table("busy", ["queue", "instructions", "busy", "busy %", "idle on DMA"],
                  busy_rows, "No queue ran anything.")
    bound_rows = [[_h(k) + (' <span class="tag">bound</span>' if k == est.bound_kind else ""),
                   _h(_fmt_us(v))]
                  for k, v in sorted(est.bounds.items(), key=lambda kv: -_num(kv[1]))]
    bounds = _table("bounds", ["roofline term", "time"], bound_rows, "No roofline terms.")
    crit_rows = [[_h(str(i + 1)), _h(short_op_name(c.name)), _h(c.track), _h(_fmt_us(c.time_ns)),
                  _h(_fmt_pct(c.pct)), _h(str(c.instances)), _source_cell(c.loc, c.source)]
                 for i, c in enumerate(est.critical_path)]
    crit = _table("crit", ["#", "op", "queue", "time", "% of latency", "instances", "source"],
                  crit_rows, "No critical path recorded.")
    warn_items = "".join(
        f'<li><span class="tag w">{_h(w.kind)}</span> {_h(w.message)}'
        + (f' <span class="loc">{_h(w.loc)}</span>' if w.loc else "") + "</li>"
        for w in est.warnings)
    warns = (f'<ul class="warnings">{warn_items}</ul>' if warn_items
             else '<p class="muted">No warnings.</p>')
    notes = "".join(f"<li>{_h(n)}</li>" for n in est.notes)
    notes_html = f'<h2>Notes</h2><ul class="notes">{notes}</ul>' if notes else ""
    return (
        '<section class="details">'
        f'<div class="panel"><h2>Engine queues</h2>{busy}<h2>Roofline</h2>{bounds}</div>'
        f'<div class="panel"><h2>Critical path</h2>{crit}'
        f'<h2>Warnings</h2>{warns}{notes_html}</div>'
        '</section>')


def render_html(est: Estimate) -> str:
    """The self-contained HTML timeline page of ``est`` (a ``str``; UTF-8 when written).

    One row ``<div class="track" data-track="NAME">`` per queue of
    :func:`.trace.ordered_tracks` (engines, then ``dma0`` ...), a summary block, the
    critical path with source lines, warnings and notes.  All text is HTML-escaped and the
    embedded JSON has ``<``, ``>``, ``&``, ``/`` and ``=`` escaped, so kernel names and
    source lines (``</script>``, quotes, ``&``) cannot break the page.  No external
    resources: no URLs, no ``src`` attributes.
    """
    tracks = ordered_tracks(est)
    data = _script_json(_timeline_data(est, tracks))
    title = f"{est.kernel} — nki-mlir estimated timeline ({est.target})"
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(title)}</title><style>{CSS}</style></head>\n<body>",
        f'<header><h1>{_h(est.kernel)}</h1><span class="chip">target {_h(est.target)}</span>'
        f'<span class="chip">schedule {_h(est.schedule)}</span>'
        f'<span class="chip">{len(est.slices)} slices</span>'
        '<span class="est">nki-mlir cost model · cycle-approximate estimate (±30%), '
        "not a measurement</span></header>\n<main>",
        _summary_html(est),
        _tracks_html(est, tracks),
        _details_html(est),
        "</main>\n<footer>Times are estimates of the nki-mlir cost model for one NeuronCore. "
        "Slices: one per dynamic instruction instance; DMA slices show the transfer "
        "(the fixed DMA latency before it is not drawn).</footer>",
        '<div id="tip"></div>\n',
        f'<script type="application/json" id="nkim-data">{data}</script>\n',
        f"<script>{JS}</script>\n</body></html>\n",
    ])


def write_html(est: Estimate, path):
    """Write :func:`render_html` of ``est`` to ``path`` (UTF-8, atomically: a temporary
    file then ``os.replace``; parent directories are created) and return it as a
    :class:`~pathlib.Path`.  Raises NKIError if the file cannot be written."""
    return atomic_write(path, render_html(est), "HTML timeline")
