"""Queue mode: executing the engine queues of the schedule (``Program.run(mode="queues")``).

The schedule (``nisa-schedule``, docs/backend.md section C) puts every ``nisa`` instruction on an
engine queue (``nkim.queue``) with waits on instructions of other queues (``nkim.deps``,
``nkim.deps_carried``, ``nkim.fence``).  Queue mode runs a kernel in two phases:

ENQUEUE, in program order: control flow (``scf`` / ``arith`` / views / ``nisa.alloc``) runs as
in program-order mode, but an instruction's closure does not run: it becomes an
:class:`Instance` holding the closure, a snapshot of the slot environment (so later loop
iterations cannot rebind its operands) and its waits resolved to concrete earlier instances:

- ``nkim.deps = [id, ...]``: the most recent instance of instruction ``id`` enqueued so far;
- ``nkim.deps_carried = [[id, level, distance], ...]``: the latest instance of ``id`` whose
  serial of the consumer's loop at ``level`` (outermost first) is <= the loop's current
  serial - ``distance``; the serial of loop ``L`` is the number of iterations of ``L``
  started since the run began, minus 1, and an instance's serial is ``L``'s serial when it
  was enqueued (:class:`QueueRun` ``serial``, advanced by the ``scf.for`` / ``scf.while``
  closures);
- ``nkim.fence`` (and ``core_barrier`` / ``sendrecv``): waits for everything enqueued before
  it, everything enqueued after waits for it;
- module ``nkim.schedule = "in-order"``: also the instance enqueued just before.

DRAIN: pending instances execute in an order that honours queue FIFO order and the waits,
choosing among the ready queue heads the one enqueued LATEST -- adversarial, so a missing
edge really changes the results.  The earliest pending instance is always ready, so this
never deadlocks.  The run drains at its end, before an instruction that defines an SSA
value from machine state (``register_read``; control flow that reads registers goes
through it), at fences (which then run at once, so cross-core barriers really synchronise
the LNC2 threads) and when more than :data:`MAX_PENDING` instances are pending.

A module without schedule attributes (hand-written IR) runs as one queue in program
order: an instruction without ``nkim.queue`` is on the queue ``"program"``.

``nisa.alloc`` in queue mode does not fill its region with sentinels (pending instances of
the previous occupant may still use those bytes; reads of never-written memory are caught
by the hazard checks, :mod:`.hazards`), and the reset of a PSUM tensor's matmul-written
flags is a pseudo-instance on the ``tensor`` queue, ordered with the matmuls.
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import BlockArgument, Operation, OpResult
from xdsl.irdl import IRDLOperation

from ..diagnostics import error_at, site_of
from ..dialects.instruction import is_cross_core
from ..dialects.nisa import AllocOp
from ..errors import NKIRuntimeError
from .env import STATE, Closure, Queued
from .forward import QUEUED

if TYPE_CHECKING:
    from .decoder import Decoder

#: pending instances that trigger a partial drain (down to half of it)
MAX_PENDING = 512
#: instances per (producer, loop) kept to resolve ``nkim.deps_carried`` waits
CARRIED_HISTORY = 16
#: queue of instructions without ``nkim.queue`` (hand-written IR): one program-order queue
PROGRAM_QUEUE = "program"


class Info:
    """Static facts of one instruction for queue mode and the hazard checks.

    Attributes:
        sid: index among the function's instructions (decode order).
        op: the instruction: the decode's own op, or once the program released its IR
            (:mod:`.ir_release`), the same op of the module re-read for it on first use.
        site: the op's :class:`~nki_mlir.diagnostics.OpSite` (what a hazard message says
            about it), None for a pseudo-instruction.
        qi: index of its queue in :attr:`Schedule.queues`.
        nid: ``nkim.id`` or None.
        deps: ``nkim.deps`` ids.
        carried: ``(producer id, loop index, distance)`` per ``nkim.deps_carried`` entry.
        fence: a fence (runs alone, after everything before it).
        eager: defines SSA values; runs at once (after a drain when it reads memory).
        drain: ``eager`` and reads memory: drain before running.
        accesses: ``(slot, role, is_write, is_read, base alloc slot or None)`` per memref
            operand; None until :meth:`resolve_accesses` (only the hazard checks need them,
            so a decode leaves them to the first hazard-checked run).
        matmul: ``None``, or the ``psum_accumulate_flags`` of a ``nisa.matmul``.
        track: loop indices whose serial this instruction's instances must record.
        forward: the plan of a DMA that forwards in hazard-checked runs
            (:func:`.forward.queued`), else None.
        checked: the :attr:`accesses` the hazard checks look at (:meth:`Schedule.prepare_checks`).
        arg_reads: indices in :attr:`accesses` of the reads of a function argument's view.
        stray_writes: whether it may write memory other than through a view of a ``nisa.alloc``.
    """

    __slots__ = ("sid", "_op", "qi", "nid", "deps", "carried", "fence", "eager", "drain",
                 "accesses", "matmul", "track", "forward", "checked", "arg_reads",
                 "stray_writes", "_slot_of", "_src", "site")

    def __init__(self, sid, op, qi, nid=None, deps=(), carried=(), fence=False, eager=False,
                 drain=False, accesses=(), matmul=None):
        self.sid, self._op, self.qi, self.nid = sid, op, qi, nid
        self.deps, self.carried = deps, carried
        self.site = site_of(op)
        self.fence, self.eager, self.drain, self.accesses, self.matmul = fence, eager, drain, accesses, matmul
        self.track: tuple[int, ...] = ()
        self.forward = None
        self.checked: tuple | None = None
        self.arg_reads: tuple[int, ...] = ()
        self.stray_writes = True
        self._slot_of: dict | None = None
        #: where the op and the decoder's slots are re-read from once the program released
        #: its IR (an :class:`.ir_release.IRSource`), else None
        self._src = None

    @property
    def op(self):
        op = self._op
        if op is None and self._src is not None:
            op = self._src.info(self.sid)._op
        return op

    def resolve_accesses(self) -> tuple:
        """:attr:`accesses`, computed on first use from the decoder's slots (every SSA value
        has one slot, assigned once, so they are the same as at decode time -- and the same
        in a decode of the re-read module, :mod:`.ir_release`; threads of an SPMD launch
        resolving at once compute the same tuple, while another's checker may drop the ops)."""
        accs = self.accesses
        if accs is None:
            slot_of, op = self._slot_of, self._op     # (drop_ops: op first, then slots)
            if op is None and self._src is not None:
                info = self._src.info(self.sid)
                slot_of, op = info._slot_of, info._op
            accs, self.arg_reads, self.stray_writes = _accesses(slot_of, op)
            self.accesses = accs
        return accs


class Schedule:
    """The static queue facts of a decoded function (built by the decoder).

    Attributes:
        queues: queue names by index.
        in_order: module ``nkim.schedule = "in-order"``.
        infos: the :class:`Info` of every instruction, decode order.
        loops: loop op -> loop index (serial counters), while decoding; emptied by
            :meth:`finish` (a decoded program keeps none of the compile's IR).
        nloops: the number of loop indices (set by :meth:`finish`).
        carried_track: producer id -> loop indices some ``nkim.deps_carried`` refers to.
    """

    def __init__(self):
        self.queues: list[str] = []
        self.in_order = False
        self.infos: list[Info] = []
        self.loops: dict[Operation, int] = {}
        self.nloops = 0
        self.carried_track: dict[int, set[int]] = {}
        self.pseudo_flags: Info | None = None
        self.checks_ready = False

    def queue_index(self, name: str) -> int:
        try:
            return self.queues.index(name)
        except ValueError:
            self.queues.append(name)
            return len(self.queues) - 1

    def loop_index(self, op: Operation) -> int:
        return self.loops.setdefault(op, len(self.loops))

    def prepare_checks(self) -> None:
        """Before the first hazard-checked run: resolve every instruction's accesses and set
        :attr:`Info.checked`.  When no instruction may write memory other than through a
        view of a ``nisa.alloc``, nothing writes the function arguments' arrays (a fresh
        allocation never shares their bytes), so reading them can race with nothing and
        touches no on-chip marks: those reads are left out.  (Threads of an SPMD launch
        preparing at once compute the same tuples.)"""
        if self.checks_ready:
            return
        infos = self.infos
        for info in infos:
            info.resolve_accesses()
        free = not any(info.stray_writes for info in infos)
        for info in infos:
            skip = info.arg_reads if free else ()
            info.checked = tuple(a for k, a in enumerate(info.accesses) if k not in skip)
        self.checks_ready = True

    def finish(self) -> None:
        """After decoding: tell producers which loop serials to record; forget the loop ops."""
        self.nloops = len(self.loops)
        self.loops = {}
        for info in self.infos:
            if info.nid is not None:
                info.track = tuple(sorted(self.carried_track.get(info.nid, ())))
        if not self.queues:
            self.queue_index(PROGRAM_QUEUE)


def _ints(op: Operation, name: str) -> list:
    """The integers (or nested integer lists) of schedule attribute ``name`` of ``op``.

    Raises:
        NKIRuntimeError: located at ``op`` when the attribute holds anything else.
    """
    attr = op.attributes.get(name)
    if attr is None:
        return []

    def conv(a):
        if isinstance(a, IntegerAttr):
            return int(a.value.data)
        if isinstance(a, ArrayAttr):
            return [conv(x) for x in a.data]
        raise error_at(op, f"{op.name}: {name} must hold integers, got {attr}", NKIRuntimeError)
    out = conv(attr)
    return out if isinstance(out, list) else [out]


def _enclosing_loops(op: Operation) -> list[Operation]:
    from ..dialects.effects import enclosing_loops
    return enclosing_loops(op)[::-1]  # outermost first (docs/backend.md section A)


def _accesses(slot_of: dict, op: Operation) -> tuple[tuple, tuple[int, ...], bool]:
    """``(accesses, arg_reads, stray_writes)`` of ``op``: see :class:`Info` (an op without an
    IRDL definition: no accesses known, and it may write anything)."""
    from ..dialects.effects import accesses
    out, reads, stray = [], [], False
    if not isinstance(op, IRDLOperation):
        return (), (), True
    for a in accesses(op):
        base = a.base
        alloc = isinstance(base, OpResult) and isinstance(base.op, AllocOp)
        stray = stray or (a.is_write and not alloc)
        slot = slot_of.get(a.value)
        if slot is None:
            continue
        if not a.is_write and isinstance(base, BlockArgument) and base.owner is not None:
            parent = base.owner.parent_op()
            if parent is not None and parent.name == "func.func":
                reads.append(len(out))
        bslot = None
        if alloc:
            bslot = slot_of.get(base)
        is_read = not a.is_write
        if op.name == "nisa.matmul" and a.role == "dst":
            mode = op.psum_accumulate_flags.data if op.psum_accumulate_flags is not None else "auto"
            is_read = mode == "accumulate"
        out.append((slot, a.role, a.is_write, is_read, bslot))
    return tuple(out), tuple(reads), stray


def wrap(dec: Decoder, op: Operation, closure: Closure) -> Closure:
    """The closure of instruction ``op``: runs ``closure`` in program-order mode, enqueues
    it in queue mode."""
    sched: Schedule = dec.schedule
    attrs = op.attributes    # (``is not None and``: an isinstance of None costs an ABC check)
    q = attrs.get("nkim.queue")
    qi = sched.queue_index(q.data if q is not None and isinstance(q, StringAttr) else PROGRAM_QUEUE)
    nid = attrs.get("nkim.id")
    carried, loops = [], None
    for entry in _ints(op, "nkim.deps_carried"):
        loops = loops if loops is not None else _enclosing_loops(op)
        if not (isinstance(entry, list) and len(entry) == 3 and 0 <= entry[1] < len(loops)):
            raise error_at(op, f"{op.name}: nkim.deps_carried entry {entry} is not "
                               f"[producer id, loop level, distance] with a loop level below "
                               f"{len(loops)} (the loops around the instruction)",
                           NKIRuntimeError)
        pid, level, dist = entry
        li = sched.loop_index(loops[level])
        carried.append((pid, li, max(int(dist), 1)))
        sched.carried_track.setdefault(pid, set()).add(li)
    eager = bool(op.results)
    resolved = _accesses(dec.slot_of, op) if eager else None
    accs = resolved[0] if resolved is not None else None
    matmul = None
    if op.name == "nisa.matmul":
        matmul = op.psum_accumulate_flags.data if op.psum_accumulate_flags is not None else "auto"
    info = Info(sid=len(sched.infos), op=op, qi=qi,
                nid=int(nid.value.data) if nid is not None and isinstance(nid, IntegerAttr) else None,
                deps=tuple(_ints(op, "nkim.deps")), carried=tuple(carried),
                fence=(f := attrs.get("nkim.fence")) is not None and isinstance(f, UnitAttr) or is_cross_core(op),
                eager=eager, drain=eager and bool(accs),
                accesses=accs, matmul=matmul)
    if resolved is not None:
        info.arg_reads, info.stray_writes = resolved[1], resolved[2]
    else:
        info._slot_of = dec.slot_of
    fwd = dec.memo.get(QUEUED)
    if fwd is not None:
        info.forward = fwd.get(op)
    sched.infos.append(info)

    return Queued(info, closure)


class Instance:
    """One dynamic execution of an instruction (or a pseudo-instruction) in queue mode."""

    __slots__ = ("info", "fn", "env", "waits", "done", "seq", "clock", "t", "rec")

    def __init__(self, info, fn, env, waits, seq):
        self.info, self.fn, self.env, self.waits, self.seq = info, fn, env, waits, seq
        self.done = False
        self.clock: list[int] | None = None
        self.t = 0.0   # modelled finish time in ns (set by a perf timer)
        self.rec = -1  # the timer's record index

    def run(self) -> None:
        fn, env = self.fn, self.env
        self.fn = self.env = self.waits = None
        self.done = True
        fn(env)


class QueueRun:
    """The queue-mode state of one ``Program.run`` (see the module docstring).

    Attributes:
        serial: per loop index, the current iteration serial (-1 before the first).
        hazards: the :class:`~.hazards.Checker`, or None.
        timer: an observer with ``add(instance, waits)`` called at every enqueue, after the
            waits are resolved (the cost model's timeline, :mod:`nki_mlir.perf.timeline`).
        execute: False for a timing-only run: instructions that define no SSA value are
            timed but never executed (their results are not needed because nothing reads
            machine state back; see :func:`nki_mlir.perf.walk.needs_execution`).
    """

    def __init__(self, sched: Schedule, hazards=None, timer=None, execute: bool = True):
        self.sched = sched
        self.timer = timer
        self.execute = execute
        nq = len(sched.queues)
        self.pending = [deque() for _ in range(nq)]
        self.npending = 0
        self.seq = 0
        self.latest: dict[int, Instance] = {}
        self.history: dict[tuple[int, int], list] = {}
        self.serial = [-1] * sched.nloops
        self.last: Instance | None = None
        self.hazards = hazards
        # vector clocks (hazard checks only): per queue, the clock of its last instance
        # (after a fence: the fence's); never updated in place
        self.qclock: list[list[int]] = [[0] * nq for _ in range(nq)]

    # ----------------------------------------------------------------- enqueue
    def _carried(self, pid: int, li: int, dist: int) -> Instance | None:
        hist = self.history.get((pid, li))
        if not hist:
            return None
        target = self.serial[li] - dist
        for serial, inst in reversed(hist):
            if serial <= target:
                return inst
        if len(hist) >= CARRIED_HISTORY:
            return hist[0][1]  # older ones were dropped: waiting on a later one is only stricter
        return None

    def _waits(self, info: Info) -> list[Instance]:
        waits = []
        latest = self.latest
        for d in info.deps:
            w = latest.get(d)
            if w is not None:
                waits.append(w)
        for pid, li, dist in info.carried:
            w = self._carried(pid, li, dist)
            if w is not None:
                waits.append(w)
        if self.sched.in_order and self.last is not None:
            waits.append(self.last)
        return waits

    def _clock(self, inst: Instance, waits: list[Instance]) -> None:
        """The vector clock of ``inst``: the join (entrywise maximum) of its queue's last
        clock and its waits' clocks, plus its own tick.  A wait already known to the queue
        (``w`` happens before the queue's last instance: ``w.clock[q] <= c[q]`` for ``w``'s
        queue ``q``, which for vector clocks means ``w.clock <= c`` entrywise) is skipped.
        A fence joins every queue's clock and is then folded into each of them (everything
        after it on any queue happens after it)."""
        info = inst.info
        qi = info.qi
        qclock = self.qclock
        c = qclock[qi]
        if info.fence:
            c = list(map(max, c, *(w.clock for w in waits), *qclock))
        else:
            for w in waits:
                wc = w.clock
                q = w.info.qi
                if wc[q] > c[q]:
                    c = list(map(max, c, wc))
            if c is qclock[qi]:
                c = c[:]
        c[qi] += 1
        inst.clock = c
        if info.fence:
            for q in range(len(qclock)):
                qclock[q] = c
        else:
            qclock[qi] = c

    def _record(self, info: Info, inst: Instance) -> None:
        if info.nid is not None:
            self.latest[info.nid] = inst
            for li in info.track:
                hist = self.history.setdefault((info.nid, li), [])
                s = self.serial[li]
                if hist and hist[-1][0] == s:
                    hist[-1] = (s, inst)
                else:
                    hist.append((s, inst))
                    if len(hist) > CARRIED_HISTORY:
                        del hist[0]
        self.last = inst

    def enqueue(self, info: Info, fn: Closure, env: list) -> None:
        """Enqueue one instance of ``info`` (or run it now if it is eager or a fence)."""
        waits = self._waits(info)
        now = info.fence or info.eager
        if not self.execute and not info.eager:
            inst = Instance(info, None, None, waits, self.seq)
            self.seq += 1
            self.timer.add(inst, waits)
            self._record(info, inst)
            inst.done = True
            return
        inst = Instance(info, fn, env if now else list(env), waits, self.seq)
        self.seq += 1
        if self.timer is not None:
            self.timer.add(inst, waits)
        hazards = self.hazards
        if hazards is not None:
            if waits or info.fence:
                self._clock(inst, waits)
            else:               # (:meth:`_clock` without waits, inline)
                c = self.qclock[info.qi][:]
                c[info.qi] += 1
                inst.clock = self.qclock[info.qi] = c
            hazards.check(inst, inst.env)
            if info.forward is not None:
                hazards.forward(info.forward, inst, env)
        self._record(info, inst)
        if now:
            if info.fence or info.drain:
                self.drain()
            inst.run()
            return
        self.pending[info.qi].append(inst)
        self.npending += 1
        if self.npending > MAX_PENDING:
            self.drain(MAX_PENDING // 2)

    def pseudo(self, queue: str, fn: Closure, env: list) -> None:
        """Enqueue a pseudo-instruction ``fn`` on ``queue`` (no waits, no accesses)."""
        if not self.execute:
            return
        sched = self.sched
        info = sched.pseudo_flags
        qi = sched.queues.index(queue) if queue in sched.queues else 0
        if info is None or info.qi != qi:
            info = sched.pseudo_flags = Info(sid=-1, op=None, qi=qi)
        inst = Instance(info, fn, env, [], self.seq)
        self.seq += 1
        if self.hazards is not None:
            self._clock(inst, [])
        self.pending[qi].append(inst)
        self.npending += 1

    # ------------------------------------------------------------------- drain
    def drain(self, keep: int = 0) -> None:
        """Execute pending instances until at most ``keep`` are left (latest ready first)."""
        pending = self.pending
        while self.npending > keep:
            best = None
            bseq = -1
            for dq in pending:
                if dq:
                    h = dq[0]
                    if h.seq > bseq:
                        for w in h.waits:
                            if not w.done:
                                break
                        else:
                            h.waits = ()      # (ready for good: waits only finish)
                            best, bseq = h, h.seq
            assert best is not None, "queue mode: no ready instance (internal error)"
            pending[best.info.qi].popleft()
            self.npending -= 1
            fn, env = best.fn, best.env         # (:meth:`Instance.run`, inline)
            best.fn = best.env = best.waits = None
            best.done = True
            fn(env)


def hb(a: Instance, b: Instance) -> bool:
    """Whether ``a`` happens before ``b`` (vector clocks, hazard mode)."""
    qi = a.info.qi
    return a.clock[qi] <= b.clock[qi]
