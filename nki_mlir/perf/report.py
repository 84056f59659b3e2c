"""The text report of an :class:`~.estimate.Estimate` (``nki-mlir profile``,
``nki.profile``'s ``report.txt``): latency, roofline, utilisation, per-queue busy time,
critical path with source lines, warnings."""
from __future__ import annotations

from .estimate import Estimate

_BOUND_NAMES = {"matmul": "TensorE FLOPs at peak", "tensor": "TensorE work", "vector": "VectorE work",
                "scalar": "ScalarE work", "gpsimd": "GpSimdE work", "dma": "busiest DMA engine",
                "hbm": "HBM bandwidth"}


def fmt_ns(ns: float) -> str:
    """``ns`` in the largest unit that keeps it >= 1 (ns, us, ms, s)."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.0f} ns"


def fmt_bytes(n: float) -> str:
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def format_report(est: Estimate) -> str:
    """A human-readable multi-line report of ``est``."""
    lines = [f"kernel {est.kernel} on {est.target} (schedule: {est.schedule}); cycle-approximate "
             f"model, read as +-30%",
             f"  estimated latency   {fmt_ns(est.latency_ns)}   ({est.instructions} instruction instances)",
             f"  roofline bound      {fmt_ns(est.bound_ns)}   ({_BOUND_NAMES.get(est.bound_kind, est.bound_kind)})",
             f"  estimate / bound    {est.ratio:.2f}x",
             f"  MFU {est.mfu_pct:.1f}%   MBU {est.mbu_pct:.1f}%   matmul {est.matmul_flops / 1e9:.3f} GFLOP",
             f"  DMA {est.dma_count} transfers, {fmt_bytes(est.dma_bytes)} "
             f"(HBM {fmt_bytes(est.hbm_bytes)}), average {fmt_bytes(est.avg_dma_bytes)}"]
    if est.bounds:
        parts = ", ".join(f"{k} {fmt_ns(v)}" for k, v in sorted(est.bounds.items(), key=lambda kv: -kv[1]))
        lines.append(f"  bound terms         {parts}")
    lines.append("  queue        busy        busy%   instr   idle on DMA")
    for t in est.tracks:
        idle = fmt_ns(t.wait_dma_ns) if t.wait_dma_ns else "-"
        lines.append(f"  {t.track:<10} {fmt_ns(t.busy_ns):>12} {t.busy_pct:>7.1f}% {t.instructions:>7}   {idle}")
    if est.critical_path:
        lines.append("  critical path (top instructions):")
        for c in est.critical_path:
            lines.append(f"    {c.pct:5.1f}%  {fmt_ns(c.time_ns):>12}  x{c.instances:<6} {c.name:<22} "
                         f"[{c.track}] {c.loc}  {c.source}")
    for w in est.warnings:
        where = f"{w.loc}: " if w.loc else ""
        lines.append(f"  warning: {where}{w.kind}: {w.message}")
    for n in est.notes:
        lines.append(f"  note: {n}")
    return "\n".join(lines)


def write_profile_files(est: Estimate, base: str) -> dict[str, str]:
    """Write ``<base>.trace.json`` (Perfetto), ``<base>.html`` (timeline) and ``<base>.txt``
    (:func:`format_report`) for ``est``, each atomically; returns their paths by kind.

    Raises:
        NKIError: a file cannot be written.
    """
    from .html import write_html
    from .trace import atomic_write, write_trace
    paths = {"trace": base + ".trace.json", "html": base + ".html", "report": base + ".txt"}
    write_trace(est, paths["trace"])
    write_html(est, paths["html"])
    atomic_write(paths["report"], format_report(est) + "\n", "text report")
    return paths
