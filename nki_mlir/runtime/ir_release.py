"""A decoded program that holds none of the compile's IR.

A decoded :class:`~.program.Program` refers to its ops only where a run-time message names
one (:class:`~nki_mlir.diagnostics.OpSite`s: name, source position, result name -- plain
data kept at decode time) and through the queue facts of its instructions
(:class:`.queues.Info`: ``op`` and the decoder's slots, which the hazard checks and the
cost model read).  :func:`release` drops the latter, so once a kernel call has returned the
module is garbage: an nki-library attention kernel's module is ~1.7 M GC-tracked objects
per instance, which every later full collection would walk again.

What reads an instruction's op afterwards gets the same op of the module re-read from the
compiled kernel's artifact (its compact form) and decoded again (:class:`IRSource`: decoding
is deterministic, so every instruction has the same index and every SSA value the same
slot).  The cost model keeps that program with the schedule; the hazard checks read the ops
once per program (the instructions' accesses, :meth:`.queues.Schedule.prepare_checks`) and
then drop them (:func:`drop_ops`): their messages name ops by their sites
(:attr:`.queues.Info.site`).  A program decoded for a hazard-checked run keeps its own ops
until then (``release(keep_ops=True)``), so it is not decoded twice.

The program of a run with ``NKI_PRECISE_FP=0`` (:meth:`.program.Program.wide`, bf16 / fp8
tensors stored as float32) is decoded on first use from the same source -- the re-read
module, not the function op the decode had (which would keep the module alive) -- and
released in turn.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable


class IRSource:
    """The instructions' queue facts of a program decoded again from its re-read module:
    ``load()`` returns that :class:`~.program.Program` (made on first use)."""

    __slots__ = ("_load", "_infos", "_lock")

    def __init__(self, load: Callable[[], object]):
        self._load = load
        self._infos: list | None = None
        self._lock = threading.Lock()   # (the threads of an SPMD launch may ask at once)

    def info(self, sid: int):
        """The :class:`.queues.Info` of instruction ``sid`` in the program decoded again."""
        infos = self._infos
        if infos is None:
            with self._lock:
                if self._infos is None:
                    self._infos = self._load().schedule.infos
                infos = self._infos
        return infos[sid]

    def forget(self) -> None:
        """Drop the program decoded again (the next :meth:`info` decodes it once more)."""
        with self._lock:
            self._infos = None


def release(program, load: Callable[[bool], object], keep_ops: bool = False,
            wide: bool = False) -> None:
    """Drop ``program``'s references to its IR (module docstring); ``load(wide)`` decodes the
    same module again (``wide``: its ``NKI_PRECISE_FP=0`` program) when an instruction's
    op, or the wide program, is asked for.  ``keep_ops``: a program decoded for a
    hazard-checked run keeps them until the checks have read them (:func:`drop_ops`), not
    to decode twice.  ``wide``: ``program`` is the wide one."""
    if program._widen is not None:
        program._widen = functools.partial(_load_released, load)
    sched = program.schedule
    if sched is None:
        return
    src = IRSource(functools.partial(load, wide))
    for info in sched.infos:
        info._src = src
    if not keep_ops:
        drop_ops(sched)


def drop_ops(sched) -> None:
    """Drop the ops of ``sched``'s instructions and their decoder's slots, and the program
    decoded again for them, if any -- when the program was released (:func:`release`; a
    program decoded otherwise keeps them)."""
    src = sched.infos[0]._src if sched.infos else None
    if src is None:
        return
    for info in sched.infos:
        info._op = None
        info._slot_of = None
    src.forget()


def _load_released(load: Callable[[bool], object], keep_ops: bool = False):
    """``load``'s wide program, released (:func:`release`; ``keep_ops``: decoded for a
    hazard-checked run)."""
    program = load(True)
    release(program, load, keep_ops, wide=True)
    return program
