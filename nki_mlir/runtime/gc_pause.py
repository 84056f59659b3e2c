"""Pausing Python's cyclic garbage collector around the toolchain's heavy phases.

A compile, a decode and a run of a large kernel keep millions of long-lived, GC-tracked
objects (IR ops and attributes, the decoded program's closures and slot tuples).  Every
collection of the older generations walks all of them again, so with the collector running
the time of a phase grows superlinearly with the kernel: decoding one 43k-op instance of an
LNC2 attention kernel (plus one full collection after it) took 9.7 s CPU with it running,
4.8 s paused; running one nki-library attention-block test's two LNC instances took 38.5 s
CPU with it running, 7.5 s with those objects out of its reach.  None of these phases
depends on the collector: the cycles a compile drops are collected once it is enabled
again, and a run creates none of its own (its arrays and views are freed by reference
counting).

A kernel call (``kernel(...)``, ``kernel[grid](...)``: :mod:`nki_mlir.driver.jit`) holds one
pause over all of its phases -- every instance's compile, decode and run -- so that no
collection falls between them while a just-compiled module is still alive (measured on an
nki-library attention kernel's LNC2 call: ~18 s CPU of collections in those gaps).

:func:`resume` ends a pause that left many young objects (:data:`SETTLE_AFTER`) with one
full collection.  Without it, the objects of a large call reach the collector's oldest
generation one generation at a time, and each step walks all of them again: measured after
an nki-library LNC2 attention call (about 16 M tracked objects kept: two decoded programs
and the nisa modules their diagnostics refer to), a youngest-generation collection of
10.4 s CPU when the call returned, then a middle one of 13.7 s and a full one of 15.5 s
within the caller's next few thousand allocations; with the full collection at once, one
walk.  A small call (a warm call, a small kernel) leaves too few objects to trigger it.

:func:`pause` / :func:`resume` are the two halves for hot paths (a run of a small kernel is
a few microseconds); :func:`no_cyclic_gc` is the context manager.  The collector's state is
restored exactly: a caller that had it disabled keeps it disabled.
"""
from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


#: net GC-tracked objects created during a pause (``gc.get_count()[0]``) from which
#: :func:`resume` runs one full collection (a pause of a large compile, decode or run
#: creates millions; a warm call of a small kernel, a few hundred)
SETTLE_AFTER = 500_000


def pause() -> bool:
    """Disable the cyclic collector; returns whether it was enabled (give it to :func:`resume`)."""
    was = gc.isenabled()
    gc.disable()
    return was


def resume(was: bool) -> None:
    """Re-enable the cyclic collector if :func:`pause` found it enabled; if the pause left
    :data:`SETTLE_AFTER` or more young objects, collect all generations at once (the
    module docstring says why)."""
    if was:
        gc.enable()
        if gc.get_count()[0] >= SETTLE_AFTER:
            gc.collect()


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector paused for the ``with`` body (restored even when it raises)."""
    was = pause()
    try:
        yield
    finally:
        resume(was)
