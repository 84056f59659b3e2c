"""Running the program instances of an SPMD / LNC launch on the ISA interpreter.

A launch (``kernel[g0, g1](...)``, ``kernel[2](...)``) runs one decoded
:class:`~.program.Program` per program instance.  What the instances share lives in a
:class:`Launch`; each ``Program.run`` gets an :class:`Instance` (its rank = physical core,
and the launch) through the per-run ``State.launch`` (NKI language guide (nki/get-started/nki-language-guide)):

- ``shared_hbm`` tensors are shared by all instances: the ``nisa.alloc`` of a kernel output
  (a ``func.return`` operand) binds output ``i`` of the launch, and any other ``shared_hbm``
  alloc binds the launch-wide tensor of the same ``nkim.name`` (its n-th alloc of that name),
  NKI's "tensors with the same name link to the same memory across the cores".  The first
  instance to execute the alloc creates the tensor (sentinel-filled); the others see what it
  wrote.  Kernel arguments are the caller's arrays, shared too.
- ``hbm`` / ``private_hbm``, SBUF and PSUM are private: every run allocates its own HBM
  arrays and acquires its own machine :class:`~.program.State`.

Execution: instances run serially in program-id order (row-major over the grid) unless the
kernel contains a cross-core instruction (``nisa.core_barrier`` / ``nisa.sendrecv``); then
each physical core is a thread running its instances in program-id order, so a barrier
really waits for the other core and ``sendrecv`` really hands SBUF tiles over (per-pipe
mailboxes).  A wait that cannot complete -- the other core finished, failed, or is blocked
elsewhere past :data:`BARRIER_TIMEOUT` seconds -- is a runtime error located at the waiting
instruction, never a hang.  (Every sendrecv sends one tile and receives one, so when all
complete no tile is left over.)

Multi-rank launches (``nki.collectives.simulate(kernel, num_ranks=N)``): :func:`run_ranks`
runs one program per rank, each a thread with its own single-core :class:`Launch` (own
outputs and HBM) sharing one :class:`Comm`, through which ``nisa.collective`` exchanges data.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from ..errors import NKIError, NKIRuntimeError
from . import blas_threads
from .env import STATE, Closure, Fault, guard
from .memory import Memory

#: seconds a core waits at a core_barrier / sendrecv for the other core before it is an error
#: (environment ``NKI_MLIR_BARRIER_TIMEOUT`` overrides)
BARRIER_TIMEOUT = float(os.environ.get("NKI_MLIR_BARRIER_TIMEOUT", "30"))



class PeerFailed(NKIRuntimeError):
    """This core stopped because another core of the launch failed (not the error to report)."""


class Launch:
    """What the program instances of one launch share.

    Attributes:
        cores: physical NeuronCores of the launch (1, or 2 for LNC2).
        comm: the :class:`Comm` of a multi-rank launch (``nki.collectives``), else None.
        rank_id: this launch's rank in ``comm`` (0 without one).
        timeout: seconds a cross-core wait may block (default :data:`BARRIER_TIMEOUT`).
        shared: ``shared_hbm`` tensors by key (``("output", i)`` / ``("named", name, n)``).
    """

    def __init__(self, cores: int = 1, timeout: float | None = None, comm: Comm | None = None,
                 rank_id: int = 0):
        self.cores = cores
        self.comm, self.rank_id = comm, rank_id
        self.timeout = BARRIER_TIMEOUT if timeout is None else float(timeout)
        self.shared: dict[tuple, np.ndarray] = {}
        self._lock = threading.Lock()
        self._cv = threading.Condition()
        self._barriers = [0] * cores        # core_barrier calls reached, per core
        self._done = [False] * cores        # the core ran all its instances (or failed)
        self._failed = False
        self._mail: dict[tuple[int, int, int], deque] = {}  # (pipe, from, to) -> tiles

    # ----------------------------------------------------------------- shared HBM
    def shared_hbm(self, key: tuple, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
        """The launch-wide tensor ``key``, created (sentinel-filled) on first use."""
        with self._lock:
            a = self.shared.get(key)
            if a is None:
                a = self.shared[key] = Memory.hbm(shape, dt)
            elif a.shape != tuple(shape) or a.dtype != dt:
                what = f"output {key[1]}" if key[0] == "output" else f"shared_hbm tensor '{key[1]}'"
                raise Fault(f"{what} is {list(a.shape)} {a.dtype} in another program instance but "
                            f"{list(shape)} {np.dtype(dt)} here; every instance must allocate it "
                            f"with the same shape and dtype")
            return a

    # ------------------------------------------------------------------ cross-core
    def _wait(self, rank: int, ready: Callable[[], bool], peer: int, what: str) -> None:
        """Wait (holding ``_cv``) until ``ready()``; a finished/failed peer or the timeout raises."""
        deadline = time.monotonic() + self.timeout
        while not ready():
            if self._failed:
                raise PeerFailed(f"core {rank} stopped: another core of the launch failed")
            if self._done[peer]:
                raise Fault(f"core {rank} waits for core {peer} {what}, but core {peer} finished its "
                            f"kernel without getting there")
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fault(f"core {rank} timed out after {self.timeout:g} s waiting for core {peer} "
                            f"{what} (core {peer} is blocked elsewhere: the two cores do not "
                            f"execute matching core_barrier / sendrecv sequences)")
            self._cv.wait(left)

    def barrier(self, rank: int) -> None:
        """``nisa.core_barrier``: the k-th barrier of each core completes together."""
        with self._cv:
            self._barriers[rank] += 1
            n = self._barriers[rank]
            self._cv.notify_all()
            for peer in range(self.cores):
                if peer != rank:
                    self._wait(rank, lambda p=peer: self._barriers[p] >= n, peer,
                               f"at core_barrier #{n}")

    def sendrecv(self, rank: int, to: int, frm: int, pipe: int, tile: np.ndarray) -> np.ndarray:
        """``nisa.sendrecv``: post ``tile`` for core ``to`` and take core ``frm``'s tile."""
        for role, r in (("send_to_rank", to), ("recv_from_rank", frm)):
            if not 0 <= r < self.cores:
                raise Fault(f"{role}={r} is not a core of this launch (it has {self.cores})")
        with self._cv:
            self._mail.setdefault((pipe, rank, to), deque()).append(np.array(tile, copy=True))
            self._cv.notify_all()
            box = self._mail.setdefault((pipe, frm, rank), deque())
            if frm == rank and not box:
                raise Fault(f"recv_from_rank={frm} is this core, but it sent itself nothing on pipe "
                            f"{pipe} (send_to_rank={to})")
            self._wait(rank, lambda: bool(box), frm, f"to send a tile on pipe {pipe}")
            return box.popleft()

    def core_finished(self, core: int, failed: bool) -> None:
        with self._cv:
            self._done[core] = True
            self._failed = self._failed or failed
            self._cv.notify_all()


class Comm:
    """The ranks of a multi-rank launch (``nki.collectives``): matched data exchanges.

    Every rank runs the same kernel, so the k-th collective of each rank is the same
    operation: :meth:`exchange` posts this rank's payload under its sequence number k and
    waits for the payloads of the ranks it needs.  A rank that finished, failed or did not
    arrive within ``timeout`` seconds is a runtime error at the waiting instruction.
    """

    def __init__(self, ranks: int, timeout: float | None = None):
        self.ranks = ranks
        self.timeout = BARRIER_TIMEOUT if timeout is None else float(timeout)
        self._cv = threading.Condition()
        self._seq = [0] * ranks
        self._posts: dict[int, dict[int, tuple[str, Any]]] = {}
        self._passed: dict[int, int] = {}   # exchange k -> ranks past it
        self._done = [False] * ranks
        self._failed = False

    def exchange(self, rank: int, what: str, payload: Any, peers: Sequence[int]) -> dict[int, Any]:
        """Post ``payload`` as this rank's ``what`` and return the payloads of ``peers``."""
        with self._cv:
            k = self._seq[rank]
            self._seq[rank] += 1
            slot = self._posts.setdefault(k, {})
            slot[rank] = (what, payload)
            self._cv.notify_all()
            deadline = time.monotonic() + self.timeout
            while True:
                missing = [p for p in peers if p not in slot]
                if not missing:
                    break
                if self._failed:
                    raise PeerFailed(f"rank {rank} stopped: another rank of the launch failed")
                gone = [p for p in missing if self._done[p]]
                if gone:
                    raise Fault(f"rank {rank} waits for rank {gone[0]} at collective #{k} ({what}), "
                                f"but rank {gone[0]} finished its kernel without getting there")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Fault(f"rank {rank} timed out after {self.timeout:g} s waiting for rank "
                                f"{missing[0]} at collective #{k} ({what})")
                self._cv.wait(left)
            for p in peers:
                if slot[p][0] != what:
                    raise Fault(f"collective #{k} is {what} on rank {rank} but {slot[p][0]} on rank "
                                f"{p}; every rank must execute the same collectives in the same order")
            got = {p: slot[p][1] for p in peers}
            self._passed[k] = self._passed.get(k, 0) + 1
            if self._passed[k] == self.ranks:  # every rank is past exchange k: free it
                del self._posts[k], self._passed[k]
            return got

    def rank_finished(self, rank: int, failed: bool) -> None:
        with self._cv:
            self._done[rank] = True
            self._failed = self._failed or failed
            self._cv.notify_all()


class Instance:
    """The per-run view of a launch: ``State.launch`` during one program instance's run.

    Attributes:
        launch: the shared :class:`Launch`.
        rank: the physical core running this instance (its ``sendrecv`` rank).
        ids: the instance's program ids.
    """

    __slots__ = ("launch", "rank", "ids")

    def __init__(self, launch: Launch, rank: int, ids: tuple[int, ...]):
        self.launch, self.rank, self.ids = launch, rank, ids


# ------------------------------------------------------------------- decoder hook


def shared_alloc(dec, op: Operation, closure: Closure | None) -> Closure | None:
    """Wrap the closure of a ``shared_hbm`` ``nisa.alloc``: in a launch it binds the
    launch-wide tensor (see the module docstring); in a plain run it is unchanged."""
    if closure is None or op.name != "nisa.alloc":
        return closure
    res = op.results[0]
    b = dec.bufs.get(res)
    if b is None or b.space != "shared_hbm":
        return closure
    key: tuple | None = None
    for use in res.uses:
        if use.operation.name == "func.return":
            key = ("output", use.index)
            break
    if key is None:
        name_attr = op.attributes.get("nkim.name")
        name = name_attr.data if isinstance(name_attr, StringAttr) else ""
        counts = dec.shared_names
        counts[name] = counts.get(name, -1) + 1
        key = ("named", name, counts[name])
    s, shape, dt = b.slot, b.shape, b.dtype

    def run(env):
        inst = env[STATE].launch
        if inst is None:
            closure(env)
        else:
            env[s] = inst.launch.shared_hbm(key, shape, dt)
    return guard(op, run)


# --------------------------------------------------------------------- the runner


def run_instances(work: Sequence[tuple[int, tuple[int, ...], Callable[[Instance], Any]]],
                  cores: int, concurrent: bool, timeout: float | None = None) -> list:
    """Run the instances of a launch; returns their results in ``work`` order.

    Args:
        work: per instance, in program-id order: ``(core, ids, run)`` where ``run(instance)``
            executes it (``Program.run(args, launch=instance)``).
        cores: physical cores of the launch.
        concurrent: one thread per core (needed by core_barrier / sendrecv); else serial.
        timeout: cross-core wait limit in seconds (default :data:`BARRIER_TIMEOUT`).

    Raises:
        NKIError: the first failure (a core that stopped only because the other failed is
            not reported).
    """
    launch = Launch(cores, timeout)
    results: list = [None] * len(work)
    if not concurrent or cores == 1:
        for i, (core, ids, fn) in enumerate(work):
            results[i] = fn(Instance(launch, core, ids))
        return results
    errors: list[BaseException | None] = [None] * cores

    def worker(core: int) -> None:
        failed = False
        try:
            for i, (c, ids, fn) in enumerate(work):
                if c == core:
                    results[i] = fn(Instance(launch, core, ids))
        except BaseException as exc:  # noqa: BLE001 -- handed to the launching thread
            errors[core] = exc
            failed = True
        finally:
            launch.core_finished(core, failed)

    threads = [threading.Thread(target=worker, args=(c,), name=f"nki-core-{c}", daemon=True)
               for c in range(cores)]
    _start_and_join(threads, errors)
    return results


def run_ranks(work: Sequence[Callable[[Instance], Any]], timeout: float | None = None) -> list:
    """Run one single-core program per rank of a multi-rank launch, one thread each.

    ``work[r](instance)`` runs rank ``r`` (its own :class:`Launch`, so its outputs are its
    own; the launches share one :class:`Comm`).  Returns the results in rank order.

    Raises:
        NKIError: the first failure (a rank stopped only because another failed is not
            reported).
    """
    comm = Comm(len(work), timeout)
    results: list = [None] * len(work)
    errors: list[BaseException | None] = [None] * len(work)

    def worker(r: int) -> None:
        failed = False
        try:
            results[r] = work[r](Instance(Launch(1, timeout, comm, r), 0, (0,)))
        except BaseException as exc:  # noqa: BLE001 -- handed to the launching thread
            errors[r] = exc
            failed = True
        finally:
            comm.rank_finished(r, failed)

    threads = [threading.Thread(target=worker, args=(r,), name=f"nki-rank-{r}", daemon=True)
               for r in range(len(work))]
    _start_and_join(threads, errors)
    return results


def _start_and_join(threads: list[threading.Thread], errors: list) -> None:
    """Run the instance / rank threads of a launch to their end, with the BLAS libraries
    at one thread from this, the launching thread (:mod:`.blas_threads`: a BLAS thread
    count set from the launching thread holds in the threads it starts; set from each of
    them, OpenBLAS 0.3.31 can leave it unchanged); then raise the first failure the
    threads left in ``errors`` (one that only stopped because a peer failed, last)."""
    blas_threads.enter()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        blas_threads.leave()
    real = [e for e in errors if e is not None and not isinstance(e, PeerFailed)]
    first = real[0] if real else next((e for e in errors if e is not None), None)
    if first is not None:
        if isinstance(first, NKIError):
            raise first.with_traceback(None)
        raise first


__all__ = ["Launch", "Comm", "run_ranks", "Instance", "run_instances", "shared_alloc", "BARRIER_TIMEOUT",
           "PeerFailed"]
