"""The result of a sweep: one :class:`Row` per variant, ranked, in a :class:`TuneResult`
whose ``str()`` is a table and whose :attr:`~TuneResult.best` is the fastest valid variant.

Latencies are the cost model's estimates (nanoseconds on one modelled NeuronCore,
cycle-approximate: read them as +-30%, see :mod:`nki_mlir.perf`); memory figures are the
allocator's bytes per partition (``manifest["memory"]``, :mod:`nki_mlir.passes.memory_report`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

#: statuses of a variant; only ``ok`` ranks
STATUSES = ("ok", "mismatch", "compile error", "run error", "internal error", "worker died")
_ENGINE_COLS = (("tensor", "PE%"), ("vector", "DVE%"), ("scalar", "ACT%"), ("gpsimd", "POOL%"))


@dataclass
class Row:
    """One variant.

    Attributes:
        params: its compile-time keyword parameters.
        status: ``ok``, or why it is rejected: ``mismatch`` (outputs differ from the
            reference), ``compile error`` (an NKIError from the compiler: a bad tile size,
            SBUF/PSUM over capacity, ...), ``run error`` (the interpreter faulted, e.g. a
            hazard check), ``internal error`` (a compiler bug), ``worker died``.
        reason: the rejection's message (the located NKIError text, or the first
            mismatching element); "" when ok.
        latency_ns / bound_ns / ratio / bound_kind / mfu_pct: the cost model's estimate
            (:class:`nki_mlir.perf.Estimate`), None when it did not compile.
        sbuf_peak_bytes / psum_peak_bytes: allocator high-water marks, bytes per partition.
        utilisation: busy % per engine queue (``tensor``, ``vector``, ..., ``dma0``, ...).
        checked: its outputs were compared with the reference.
        cached: the row came from the results cache (nothing was recomputed).
        seconds: wall time to evaluate it (compile + estimate + run), 0 when cached.
        warnings: first lines of compiler warnings it raised.
    """

    params: dict
    status: str = "ok"
    reason: str = ""
    latency_ns: float | None = None
    bound_ns: float | None = None
    ratio: float | None = None
    bound_kind: str = ""
    mfu_pct: float | None = None
    sbuf_peak_bytes: int | None = None
    psum_peak_bytes: int | None = None
    utilisation: dict = field(default_factory=dict)
    checked: bool = False
    cached: bool = False
    seconds: float = 0.0
    compile_seconds: float = 0.0
    warnings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_dict(cls, d: dict) -> "Row":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def rank(rows: list[Row]) -> list[Row]:
    """Valid rows by estimated latency (ties: less SBUF), then rejected rows in sweep order."""
    good = sorted((r for r in rows if r.ok), key=lambda r: (r.latency_ns, r.sbuf_peak_bytes or 0))
    return good + [r for r in rows if not r.ok]


@dataclass
class TuneResult:
    """A ranked sweep.

    Attributes:
        kernel: the kernel's name.  rows: every variant, valid ones first by latency.
        backend: where it ran (``inline``, ``process pool (N workers)``, ``ray``).
        seconds: wall time of the sweep.  evaluated: variants computed now (the others
            came from the results cache).  reference: what outputs were checked against.
        search: ``exhaustive`` or ``optuna``.  space_size: variants in the space.
    """

    kernel: str
    rows: list[Row]
    backend: str = "inline"
    seconds: float = 0.0
    evaluated: int = 0
    reference: str = ""
    search: str = "exhaustive"
    space_size: int = 0

    @property
    def best(self) -> Row | None:
        """The fastest valid variant, or None when every variant was rejected."""
        return self.rows[0] if self.rows and self.rows[0].ok else None

    @property
    def ok(self) -> list[Row]:
        return [r for r in self.rows if r.ok]

    @property
    def rejected(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    def table(self, top: int | None = None) -> str:
        return format_table(self, top)

    def __str__(self) -> str:
        return format_table(self)


def format_table(res: TuneResult, top: int | None = None) -> str:
    """The header line, one line per valid variant (``top`` of them) and one per rejected
    variant with the first line of its reason."""
    from ..perf.report import fmt_bytes, fmt_ns
    n_ok = len(res.ok)
    tried = len(res.rows)
    space = f" of {res.space_size}" if res.space_size and res.space_size != tried else ""
    head = (f"tune {res.kernel}: {tried}{space} variants ({res.search}), {n_ok} ok, "
            f"{tried - n_ok} rejected; {res.evaluated} evaluated, {tried - res.evaluated} from "
            f"cache, in {res.seconds:.1f} s on {res.backend}")
    lines = [head]
    if res.reference:
        lines.append(f"outputs checked against {res.reference}")
    names = list(res.rows[0].params) if res.rows else []
    cols = ["rank", *names, "latency", "bound", "ratio", "SBUF", "PSUM",
            *(c for _, c in _ENGINE_COLS), "DMA%"]
    table: list[list[str]] = []
    shown = res.ok[:top] if top else res.ok
    for i, r in enumerate(shown, 1):
        u = r.utilisation or {}
        dma = max((v for k, v in u.items() if k.startswith("dma")), default=0.0)
        table.append([str(i), *(_val(r.params.get(n)) for n in names), fmt_ns(r.latency_ns),
                      fmt_ns(r.bound_ns), f"{r.ratio:.2f}", fmt_bytes(r.sbuf_peak_bytes or 0),
                      fmt_bytes(r.psum_peak_bytes or 0),
                      *(f"{u.get(t, 0.0):.0f}" for t, _ in _ENGINE_COLS), f"{dma:.0f}"])
    if table:
        widths = [max(len(c), *(len(row[j]) for row in table)) for j, c in enumerate(cols)]
        lines.append("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
        lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in table]
    if top and n_ok > top:
        lines.append(f"  ... {n_ok - top} more valid variants")
    if res.rejected:
        lines.append("rejected:")
        groups: dict[tuple, list[Row]] = {}     # one line per distinct status and message
        for r in res.rejected:
            first = r.reason.splitlines()[0] if r.reason else ""
            groups.setdefault((r.status, first), []).append(r)
        for (status, first), rs in groups.items():
            if len(rs) <= 2:
                lines += [f"  {_params(r.params)}: {status}: {first}" for r in rs]
            else:
                lines.append(f"  {len(rs)} variants ({_params(rs[0].params)}; ...): {status}: {first}")
    return "\n".join(lines)


def _params(params: dict) -> str:
    return ", ".join(f"{k}={_val(v)}" for k, v in params.items())


def _val(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)
