"""A decoded kernel (:class:`Program`) and the per-run machine state it executes on.

``Program.run(args)`` checks the arguments against the function signature, builds a fresh
slot environment (:mod:`.env`) from the decoded template, runs the closures on a
:class:`State` -- in program order, or in queue mode (:mod:`.queues`) with optional hazard
checks (:mod:`.hazards`) -- and returns the ``func.return`` operands as NumPy arrays.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func

from .. import dtypes
from ..diagnostics import error_at, site_of
from ..dialects.common import ON_CHIP
from ..errors import NKIError, NKITypeError
from . import blas_threads, gc_pause, precise_fp
from .env import STATE, Closure, program_order, raise_located
from .hazards import Checker
from .memory import PARTITIONS, Memory
from .queues import QueueRun

MODES = ("program-order", "queues")
#: held while a program decodes its ``NKI_PRECISE_FP=0`` variant (:meth:`Program.wide`)
_WIDEN_LOCK = threading.Lock()
#: the environment variable turning hazard checks on (``"1"``) for runs that do not say
HAZARDS_ENV = "NKI_MLIR_HAZARDS"

#: NumPy's ufunc buffer size (elements) while a kernel runs.  Tiles in SBUF / PSUM are
#: strided views (one row per partition); with the default 8192, NumPy 2 copies such
#: operands through its buffers (~2-3x slower elementwise ops); below a row's length it
#: runs its loops on the rows in place.  Elementwise results do not depend on it, and the
#: interpreter's reductions never cast (so their summation order does not depend on it).
RUN_BUFSIZE = 1024

try:   # NumPy >= 2: the ufunc state (errors, buffer size) is one context variable
    from numpy._core._ufunc_config import _extobj_contextvar
    from numpy._core.umath import _make_extobj
    _RUN_EXTOBJ = _make_extobj(all="ignore", bufsize=RUN_BUFSIZE)

    def _enter_numerics():
        return _extobj_contextvar.set(_RUN_EXTOBJ)

    def _leave_numerics(token) -> None:
        _extobj_contextvar.reset(token)
except ImportError:    # NumPy 1.26
    def _enter_numerics():
        return np.seterr(all="ignore"), np.setbufsize(RUN_BUFSIZE)

    def _leave_numerics(token) -> None:
        np.seterr(**token[0])
        np.setbufsize(token[1])


def resolve_mode(mode: str | None, hazards: bool | None) -> tuple[str, bool]:
    """The effective ``(mode, hazards)`` of a run (see :meth:`Program.run`)."""
    if hazards is None:
        hazards = os.environ.get(HAZARDS_ENV, "0") == "1" and mode in (None, "queues")
    if mode is None:
        mode = "queues" if hazards else "program-order"
    if mode not in MODES:
        raise NKITypeError(f"run(): mode must be one of {', '.join(MODES)}, got {mode!r}")
    if hazards and mode != "queues":
        raise NKITypeError("run(): hazards=True needs mode='queues' (or mode=None)")
    return mode, bool(hazards)


class State:
    """Per-run machine state outside the tensors' memories.

    Attributes:
        mem: SBUF and PSUM (:class:`~.memory.Memory`).
        act_acc: ScalarE per-lane fp32 accumulators (``activation`` / ``activate2``).
        dve_acc: VectorE per-lane fp32 accumulators (``exponential``, ``range_select``,
            ``select_reduce``, ``tensor_scalar_reduce``, ``tensor_scalar_cumulative``).
        rng: PRNG state per engine name (``"vector"``, ``"gpsimd"``): uint32 arrays of
            shape ``(128, words)``; absent until seeded or first used.
        regs: engine register values by register id (32-bit ints or fp32).
        launch: the :class:`~.spmd.Instance` of an SPMD / LNC launch this run is one program
            instance of (shared HBM, cross-core barriers and mailboxes), else None.
        program_ids: the ids ``nisa.program_id`` reads outside a launch (a run of one
            instance of a program its launch shares, e.g. the cost model's), else None.
        queues: the :class:`~.queues.QueueRun` of a queue-mode run, else None.
        once: per-run markers of the diagnostics an instruction reports once per run.
        scratch: temporaries an instruction reuses across instructions and runs (their
            contents never outlive one instruction).
        range_mode: ``$NKI_MLIR_RANGE_CHECK`` as read at the first activation range check
            of the run (:mod:`.act_range`), None before it.
        mirrors: the hazard checks' per-byte shadows of SBUF / PSUM (kept with the state:
            every alloc clears its own bytes, so they need no reset between runs) and the
            footprints of the placed tensors' views (``"footprints"``).
    """

    __slots__ = ("mem", "act_acc", "dve_acc", "rng", "regs", "launch", "program_ids", "queues",
                 "mirrors", "once", "scratch", "range_mode")

    def __init__(self, target: str):
        self.mem = Memory(target)
        self.act_acc = np.zeros(PARTITIONS, np.float32)
        self.dve_acc = np.zeros(PARTITIONS, np.float32)
        self.rng: dict[str, np.ndarray] = {}
        self.regs: dict[int, object] = {}
        self.launch = None
        self.program_ids = None
        self.queues = None
        self.mirrors: dict = {}
        self.once: set = set()
        #: reusable temporaries by (shape, dtype) (:func:`~.env.scratch`)
        self.scratch: dict = {}
        self.range_mode: str | None = None

    def reset(self) -> None:
        """Forget everything but the memories (which every ``nisa.alloc`` refills)."""
        if self.mem.trim():         # the blocks' footprints and marks go with them
            self.mirrors.clear()
        self.act_acc.fill(0)
        self.dve_acc.fill(0)
        if self.rng:
            self.rng.clear()
        if self.regs:
            self.regs.clear()
        self.launch = None
        self.program_ids = None
        self.queues = None
        if self.once:
            self.once.clear()
        self.range_mode = None


def _ids(program_ids) -> tuple[int, ...]:
    """``program_ids`` as a tuple of non-negative ints, else NKITypeError."""
    try:
        ids = tuple(program_ids)
    except TypeError:
        ids = None
    if ids is None or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                              and i >= 0 for i in ids):
        raise NKITypeError(f"program_ids must be a tuple of non-negative ints, one per "
                           f"launch-grid axis, got {program_ids!r}")
    return tuple(int(i) for i in ids)


# Idle machine states, reused across runs and programs: a fresh 28 MiB SBUF per run would
# cost milliseconds in page faults.  Reuse is safe because every nisa.alloc refills its
# region with sentinels (and clears PSUM flags) when it executes, so no value can leak from
# one run to the next.  The pool is bounded (POOL_MAX states over all targets, the least
# recently used dropped first) and released when idle: a daemon timer drops every state
# unused for IDLE_SECONDS ($NKI_MLIR_STATE_IDLE_SECONDS, default 30 s), so a long-running
# process holds no interpreter memory between bursts of work.
POOL_MAX = 2
IDLE_SECONDS = float(os.environ.get("NKI_MLIR_STATE_IDLE_SECONDS", "30") or 30)
_POOL: list[tuple[State, float]] = []     # (state, monotonic time of its release)
_POOL_LOCK = threading.Lock()
_POOL_TIMER: list[threading.Timer] = []


def _acquire_state(target: str) -> State:
    with _POOL_LOCK:
        if _POOL and _POOL[-1][0].mem.target == target:    # the state released last
            state = _POOL.pop()[0]
        else:
            for i in range(len(_POOL) - 1, -1, -1):
                if _POOL[i][0].mem.target == target:
                    state = _POOL.pop(i)[0]
                    break
            else:
                return State(target)
    state.reset()
    return state


def _release_state(state: State) -> None:
    with _POOL_LOCK:
        _POOL.append((state, time.monotonic()))
        if len(_POOL) > POOL_MAX:
            del _POOL[:-POOL_MAX]
        if not _POOL_TIMER:
            _arm_timer(IDLE_SECONDS)


def _arm_timer(delay: float) -> None:
    t = threading.Timer(delay, release_idle_states)
    t.daemon = True
    _POOL_TIMER.append(t)
    t.start()


def release_idle_states(max_idle: float | None = None) -> int:
    """Drop pooled interpreter states idle for ``max_idle`` seconds or more (default
    ``IDLE_SECONDS``; 0 drops all); returns how many were dropped."""
    limit = IDLE_SECONDS if max_idle is None else max_idle
    with _POOL_LOCK:
        now = time.monotonic()
        keep = [(st, t) for st, t in _POOL if now - t < limit]
        dropped = len(_POOL) - len(keep)
        _POOL[:] = keep
        _POOL_TIMER.clear()
        if _POOL:
            _arm_timer(max(0.01, limit - (now - min(t for _, t in _POOL))))
    return dropped


class Program:
    """A decoded kernel, ready to :meth:`run` any number of times.

    Attributes:
        target: ``"trn1"`` / ``"trn2"`` / ``"trn3"`` (the module's ``nisa.target``; default trn2).
        func_name: the executed ``func.func``.
        instruction_count: static number of ``nisa`` instructions in the function
            (each loop body counted once; ``nisa.alloc`` / ``nisa.release`` not counted).
        arg_names: names of the kernel arguments (SSA names, or ``arg<i>``).
        arg_types: per argument ``(shape, dtype, memory space)``; space ``None`` for scalars.
        result_types: per result ``(shape, dtype, memory space)``.
    """

    def __init__(self, *, func_op: func.FuncOp, target: str, body: list[Closure],
                 template: list, arg_slots: list[int], arg_specs: list, arg_names: list[str],
                 ret_slots: list[int], ret_specs: list, instruction_count: int, schedule=None,
                 plan=None, widen=None):
        #: the function's :class:`~nki_mlir.diagnostics.OpSite` (argument errors are located
        #: at it; a program holds none of the compile's IR)
        self._func = site_of(func_op)
        #: ``widen(keep_ops)`` decodes the program a run with ``NKI_PRECISE_FP=0`` executes
        #: (bf16 / fp8 tensors stored as float32, :mod:`.precise_fp`), kept in :attr:`_wide`
        #: once made; None for that program itself (``keep_ops``: :meth:`wide`)
        self._widen = widen
        self._wide: Program | None = None
        self.target = target
        self.func_name = func_op.sym_name.data
        self._body = body
        #: the body in program order: the instructions' own closures, not their queue-mode
        #: wrappers (:func:`.queues.wrap`), unguarded, at the top level, and the op of each
        #: unguarded closure (a failure is located from it, :func:`.env.program_order`)
        self._po_body, self._po_ops = program_order(body)
        self._template = template
        self._arg_slots = arg_slots
        self._arg_specs = arg_specs
        self.arg_names = arg_names
        self._ret_slots = ret_slots
        self.instruction_count = instruction_count
        self.arg_types = [(s[0], s[1], s[2]) for s in arg_specs]
        self.result_types = list(ret_specs)
        self._ret_single = len(ret_slots) == 1 and ret_specs[0][2] not in ON_CHIP
        self._schedule = schedule
        self._plan = plan

    def wide(self, hazards: bool = False) -> Program:
        """The program of a run with ``NKI_PRECISE_FP=0`` (decoded on first use; the same
        arguments, results, placements and schedule, with the bf16 / fp8 tensors the kernel
        allocates stored as float32, :mod:`.precise_fp`).  ``hazards``: decoded for a
        hazard-checked run, a program that holds no IR keeps its ops until the checks have
        read them (:func:`.ir_release.release`)."""
        w = self._wide
        if w is None:
            with _WIDEN_LOCK:       # (the core threads of an LNC2 launch may ask at once)
                w = self._wide
                if w is None:
                    w = self._wide = self._widen(hazards)
        return w

    @property
    def timing_plan(self):
        """The control-flow skeleton of the function for timing-only walks
        (:mod:`.timing_plan`), or None when it holds an op such a walk cannot skip."""
        return self._plan

    @property
    def schedule(self):
        """The static queue facts (:class:`~.queues.Schedule`) decoded from the module."""
        return self._schedule

    def __repr__(self) -> str:
        return (f"<Program @{self.func_name} on {self.target}: {len(self.arg_names)} args, "
                f"{len(self._ret_slots)} results, {self.instruction_count} instructions>")

    def _check_args(self, args: Sequence) -> list:
        n = len(self._arg_specs)
        if type(args) not in (list, tuple) and (isinstance(args, np.ndarray) or
                                                not isinstance(args, Sequence)):
            raise error_at(self._func, f"@{self.func_name}: run() takes a sequence of {n} "
                                       f"argument(s), got {type(args).__name__}", NKITypeError)
        if len(args) != n:
            names = ", ".join(self.arg_names) or "none"
            raise error_at(self._func, f"@{self.func_name} takes {n} argument(s) ({names}), "
                                       f"got {len(args)}", NKITypeError)
        out = []
        for i, (a, (shape, dt, space)) in enumerate(zip(args, self._arg_specs)):
            if space is None:  # scalar argument
                if not isinstance(a, (int, float, np.integer, np.floating)):
                    raise self._arg_error(i, f"got {type(a).__name__}", number=True)
                out.append(np.float32(a) if dt is not None and dtypes.is_float(dt) else int(a))
                continue
            if not isinstance(a, np.ndarray):
                raise self._arg_error(i, f"got {type(a).__name__}")
            if a.dtype != dt:
                raise self._arg_error(i, f"got dtype {a.dtype} (convert it with .astype(...))")
            if a.shape != shape:
                raise self._arg_error(i, f"got shape {list(a.shape)}")
            if not a.flags.writeable:
                a = a.copy()  # kernels may write their arguments; a read-only input stays intact
            out.append(a)
        return out

    def _arg_error(self, i: int, got: str, number: bool = False) -> NKITypeError:
        """The error for argument ``i``: what it must be, and ``got``."""
        shape, dt, _ = self._arg_specs[i]
        want = "a number" if number else \
            f"a NumPy array of shape {list(shape)} and dtype {dtypes.name_of(dt)}"
        return error_at(self._func, f"@{self.func_name}: argument #{i} '{self.arg_names[i]}' "
                                    f"must be {want}, {got}", NKITypeError)

    def run(self, args: Sequence[np.ndarray], launch=None, mode: str | None = None,
            hazards: bool | None = None, timer=None, execute: bool = True,
            program_ids: tuple | None = None) -> tuple[np.ndarray, ...]:
        """Execute the kernel on ``args`` and return its outputs.

        Args:
            args: one NumPy array per kernel argument, with exactly the shape and dtype of
                the function signature (bf16/fp8 as ``ml_dtypes`` arrays).  Writes the kernel
                makes to an argument are visible in the caller's array.
            launch: the :class:`~.spmd.Instance` when this run is one program instance of an
                SPMD / LNC launch: its ``shared_hbm`` tensors (outputs included) are then the
                launch's, shared with the other instances (see :mod:`.spmd`).
            mode: ``"program-order"`` (every instruction runs when control flow reaches it)
                or ``"queues"`` (the schedule's engine queues, :mod:`.queues`).
            hazards: run the hazard checks (:mod:`.hazards`; implies ``"queues"``).
                Defaults: environment ``NKI_MLIR_HAZARDS`` -- ``"1"`` means queues and
                checks, anything else (the default ``"0"``) program order without checks.
            timer: the cost model's timeline (:class:`nki_mlir.perf.timeline.Timeline`),
                told about every instruction instance as the queues enqueue it (implies
                ``"queues"``).
            execute: with a ``timer``, False skips executing the instructions (a timing-only
                run: the outputs are then meaningless; only valid when control flow does
                not read machine state, :func:`nki_mlir.perf.walk.needs_execution`).
            program_ids: without ``launch``, the program ids a program traced once for
                every instance of its launch reads (``nl.program_id``; one per grid axis).

        Returns:
            The ``func.return`` operands in order, as NumPy arrays the caller owns.

        Raises:
            NKITypeError: wrong argument count, type, shape or dtype.
            NKIRuntimeError: a runtime fault, located at the faulting op.
            NKIHazardError: with hazards on, a race, overlapping live buffers, a read of
                never-written SBUF/PSUM or an accumulation onto non-matmul PSUM data.
        """
        if program_ids is not None:
            program_ids = _ids(program_ids)
        if timer is not None:
            mode = "queues"
        mode, hazards = resolve_mode(mode, hazards)
        return self.run_checked(self._check_args(args), launch, mode, hazards, timer, execute,
                                program_ids)

    def run_checked(self, vals: list, launch=None, mode: str = "program-order",
                    hazards: bool = False, timer=None, execute: bool = True,
                    program_ids: tuple | None = None) -> tuple:
        """:meth:`run` on arguments already checked: ``vals`` holds one C-contiguous,
        writeable NumPy array of the signature's shape and dtype per argument (or the
        converted number of a scalar argument), and ``mode`` / ``hazards`` are resolved
        (:func:`resolve_mode`).  The warm-call path (:mod:`nki_mlir.driver.warm_plan`) checks
        these once per call spec.

        ``NKI_PRECISE_FP`` is read here, at every run: ``0`` runs :meth:`wide` instead."""
        if self._widen is not None and not precise_fp.precise():
            return self.wide(hazards).run_checked(vals, launch, mode, hazards, timer, execute,
                                           program_ids)
        env = list(self._template)
        state = _acquire_state(self.target)
        env[STATE] = state
        state.launch = launch
        state.program_ids = program_ids
        for slot, v in zip(self._arg_slots, vals):
            env[slot] = v
        qr = None
        if mode == "queues":
            # (flag writes a program-order run left pending reach the bytes first: the
            # queue-mode paths and the hazard checks then start from written flags)
            state.mem.settle()
            qr = state.queues = QueueRun(self._schedule, timer=timer,
                                         execute=execute or timer is None)
            if hazards:
                qr.hazards = Checker(state, qr)
        numerics = _enter_numerics()   # floating-point errors ignored, RUN_BUFSIZE
        gc_was = gc_pause.pause()      # (a run creates no cycles: gc_pause)
        blas_threads.enter()           # tile matmuls on one BLAS thread (blas_threads)
        try:
            if qr is None:
                f = None
                try:
                    for f in self._po_body:
                        f(env)
                except NKIError:
                    raise
                except Exception as e:  # noqa: BLE001  (located at the op of the closure)
                    raise_located(self._po_ops, f, e)
            else:
                for f in self._body:
                    f(env)
                qr.drain()
        finally:
            blas_threads.leave()
            gc_pause.resume(gc_was)
            _leave_numerics(numerics)
            if qr is not None:
                state.mem.settle()      # the pending PSUM flag writes (Memory.set_flags)
            # (program order: they stay pending with the pooled memory -- every later flag
            # write and read goes through Memory.set_flags / flags_state / settle, which
            # order them, and Memory.trim settles them before dropping the blocks)
            state.mem.end_run()         # the views of this run's fresh arrays
            state.launch = state.program_ids = None
            state.queues = None
            _release_state(state)
        if self._ret_single:            # one HBM result (most kernels): no copy
            v = env[self._ret_slots[0]]
            return (v if type(v) is np.ndarray else np.asarray(v),)
        outs: list = []
        seen: set[int] = set()
        for slot, (_, _, space) in zip(self._ret_slots, self.result_types):
            v = env[slot]
            if isinstance(v, np.ndarray):
                if space in ON_CHIP or id(v) in seen:
                    v = v.copy()
                seen.add(id(v))
            else:
                v = np.asarray(v)
            outs.append(v)
        return tuple(outs)

