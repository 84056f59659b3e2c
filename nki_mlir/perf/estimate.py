"""The result of the cost model: :class:`Estimate` and the records it is made of.

An :class:`Estimate` is what ``compiled.estimate()`` returns, what ``nki.benchmark`` /
``nki.profile`` report from and what the trace writers (:mod:`.trace`, :mod:`.html`)
draw.  All times are nanoseconds (``*_ns``) on the modelled NeuronCore; the model is
cycle-approximate ("±30%", docs/cost-model.md), never a measurement.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: compute-engine tracks in display order; DMA queue tracks (``dma0`` ...) follow them
ENGINES = ("tensor", "vector", "scalar", "gpsimd")


@dataclass
class Slice:
    """One dynamic instruction instance on the timeline.

    Attributes:
        track: the engine queue it ran on: ``tensor`` / ``vector`` / ``scalar`` /
            ``gpsimd`` or a DMA queue ``dma0`` ... (``program`` for unscheduled IR).
        name: the op name, e.g. ``nisa.matmul``.
        start_ns, end_ns: when it occupied its queue (for a DMA: its transfer, from the
            first DMA engine starting to the last finishing; the fixed DMA latency before
            it is not part of the slice).
        label: the operands, e.g. ``dst=128x512xf32@psum stationary=128x128xbf16@sbuf ...``.
        loc: ``file:line`` of the kernel source that made it ("" if unknown).
        source: that source line's text, stripped ("" if unknown).
        waited_on: the dependency that decided its start (the wait whose producer finished
            last, when that was later than its queue becoming free), as
            ``"<op name> @ <file:line> (<track>)"``, else None.
        sid: static instruction index (decode order; equal for every instance of one op).
        index: dynamic instance number (enqueue order).
        bytes: bytes moved (DMAs; 0 for compute).
        flops: matmul FLOPs (2*K*M*N; 0 otherwise).
    """

    track: str
    name: str
    start_ns: float
    end_ns: float
    label: str = ""
    loc: str = ""
    source: str = ""
    waited_on: str | None = None
    sid: int = -1
    index: int = -1
    bytes: int = 0
    flops: float = 0.0

    @property
    def dur_ns(self) -> float:
        return self.end_ns - self.start_ns


@dataclass
class TrackStats:
    """Per engine queue totals.

    Attributes:
        track: the queue name.
        busy_ns: summed slice durations.
        busy_pct: ``busy_ns / latency_ns * 100``.
        instructions: dynamic instruction count on the queue.
        wait_dma_ns: time the queue sat idle because its next instruction waited on a DMA
            (compute queues only; 0 for DMA queues).
    """

    track: str
    busy_ns: float
    busy_pct: float
    instructions: int
    wait_dma_ns: float = 0.0


@dataclass
class CriticalEntry:
    """One static instruction's share of the critical path.

    Attributes:
        name: op name.  loc / source: its kernel source line.  track: its queue.
        time_ns: summed duration of its instances on the critical path.
        instances: how many of its instances lie on the path.
        pct: ``time_ns / latency_ns * 100``.
    """

    name: str
    loc: str
    source: str
    track: str
    time_ns: float
    instances: int
    pct: float


@dataclass
class PerfWarning:
    """A neuron-profile-like finding: ``kind`` (``small_dma`` / ``small_moving`` /
    ``idle_on_dma`` / ...), a one-line ``message``, and where (``loc``, may be "")."""

    kind: str
    message: str
    loc: str = ""


@dataclass
class Estimate:
    """Every figure of one modelled kernel run (one NeuronCore).

    Attributes:
        kernel: kernel name.  target: ``trn1`` / ``trn2`` / ``trn3``.
        schedule: the module's ``nkim.schedule`` (``list`` / ``in-order``).
        latency_ns: estimated end-to-end latency (last instruction's end).
        tracks: :class:`TrackStats` per queue that ran anything (engines first).
        dma_bytes: bytes moved by all DMAs.  hbm_bytes: of those, bytes read from or
            written to HBM.  dma_count: dynamic DMA instructions.
        avg_dma_bytes: ``dma_bytes / dma_count`` (0 without DMAs).
        matmul_flops: TensorE matmul FLOPs.
        mfu_pct: model FLOPs utilisation: ``matmul time at the dtype's peak rate /
            latency * 100``.
        mbu_pct: memory bandwidth utilisation: ``hbm_bytes / (latency * HBM bandwidth
            per core) * 100``.
        bound_ns: roofline lower bound: the max of :attr:`bounds`.
        bound_kind: which term of :attr:`bounds` is the max.
        bounds: ``{term: ns}``: ``matmul`` (FLOPs at peak), ``tensor`` / ``vector`` /
            ``scalar`` / ``gpsimd`` (each engine's total work), ``dma`` (DMA engine work
            spread over all DMA engines), ``hbm`` (HBM bytes at the HBM bandwidth).
        ratio: ``latency_ns / bound_ns`` (>= 1 up to the model's own rounding).
        critical_path: the top :class:`CriticalEntry` rows, largest first.
        warnings: :class:`PerfWarning` findings.
        slices: every :class:`Slice` (timeline), enqueue order; empty if not kept.
        instructions: dynamic instruction count.
        notes: caveats (e.g. synthetic inputs decided data-dependent control flow).
    """

    kernel: str
    target: str
    schedule: str
    latency_ns: float
    tracks: list[TrackStats] = field(default_factory=list)
    dma_bytes: int = 0
    hbm_bytes: int = 0
    dma_count: int = 0
    avg_dma_bytes: float = 0.0
    matmul_flops: float = 0.0
    mfu_pct: float = 0.0
    mbu_pct: float = 0.0
    bound_ns: float = 0.0
    bound_kind: str = ""
    bounds: dict[str, float] = field(default_factory=dict)
    ratio: float = 0.0
    critical_path: list[CriticalEntry] = field(default_factory=list)
    warnings: list[PerfWarning] = field(default_factory=list)
    slices: list[Slice] = field(default_factory=list)
    instructions: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def latency_us(self) -> float:
        return self.latency_ns / 1e3

    def track(self, name: str) -> TrackStats | None:
        """The :class:`TrackStats` of queue ``name``, or None if nothing ran there."""
        return next((t for t in self.tracks if t.track == name), None)


#: the :class:`Estimate` fields a :class:`LazyEstimate` computes on first access
LAZY_FIELDS = ("tracks", "dma_bytes", "hbm_bytes", "dma_count", "avg_dma_bytes", "matmul_flops",
               "mfu_pct", "mbu_pct", "bound_ns", "bound_kind", "bounds", "ratio",
               "critical_path", "warnings", "slices")


class _Deferred:
    """A field of a :class:`LazyEstimate` not computed yet: reading it computes them all
    (a non-data descriptor: once computed, the instance's own value is read)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        obj._force()
        return obj.__dict__[self.name]


class LazyEstimate(Estimate):
    """An :class:`Estimate` whose figures other than ``kernel``, ``target``, ``schedule``,
    ``latency_ns``, ``instructions`` and ``notes`` (:data:`LAZY_FIELDS`) are computed from
    the timeline on first access, all at once; it equals (``==``) the eager
    :class:`Estimate` of the same run, and copies and pickles as one.

    Constructed by :func:`~.summary.summarize` with ``_figures``, a function returning the
    deferred fields by name; without it, exactly like :class:`Estimate`.  A field assigned
    before the figures are computed keeps its assigned value."""

    def __init__(self, *args, _figures=None, **kwargs):
        if _figures is None:
            Estimate.__init__(self, *args, **kwargs)
            return
        d = self.__dict__
        d.update(kwargs)
        d["_figures"] = _figures

    def _force(self) -> None:
        d = self.__dict__
        fn = d.pop("_figures", None)
        if fn is not None:
            for name, value in fn().items():
                d.setdefault(name, value)

    def __eq__(self, other):
        if not isinstance(other, Estimate):
            return NotImplemented
        return (tuple(getattr(self, f) for f in _FIELDS)
                == tuple(getattr(other, f) for f in _FIELDS))

    __hash__ = None

    def __repr__(self) -> str:
        return Estimate.__repr__(self)

    def __reduce__(self):
        return (Estimate, tuple(getattr(self, f) for f in _FIELDS))


for _name in LAZY_FIELDS:
    setattr(LazyEstimate, _name, _Deferred(_name))
_FIELDS = tuple(Estimate.__dataclass_fields__)
