"""Run a long compile phase on its own large block of CPython's frame stack (issue 17).

CPython 3.11+ keeps the frames of Python calls on a per-thread stack made of chunks (16 KiB
by default, each its own ``mmap``).  When the first frame of a chunk returns, the chunk is
unmapped at once; the next call past that boundary maps a fresh one and page-faults it in.
A phase whose hot calls go back and forth over a chunk boundary (the frontend's per-op
verify and build calls, tens of thousands of times per kernel) then pays an ``mmap`` +
``munmap`` + page fault per call.  Where the boundary falls depends only on how deep the
caller's stack already is: tracing the attention_cte instance of nki-library's suite made
369k ``mmap``/``munmap`` pairs of 16 KiB under pytest (trace 9.2 s CPU, 4 s of it in the
kernel) against 216 when called from a shallow script (4.3 s); shifting the caller's stack
by ~8 KiB reproduces it outside pytest.

:func:`on_fresh_stack` calls a function from a frame sized so that CPython must give it a
new chunk of 256 KiB: the frame takes the lower half, the callee and everything it calls
get the other 128 KiB (several hundred frames) contiguous, and that chunk is unmapped only
when :func:`on_fresh_stack` returns.  The callee's results are unchanged (only where its
frames live differs); the unused part of the frame is never written, so costs no memory.
"""
from __future__ import annotations

from typing import Any, Callable

#: value-stack slots added to the trampoline's frame (8 bytes each): 16384 slots (128 KiB)
#: plus CPython's per-chunk overhead round the new chunk up to 256 KiB
FRAME_SLOTS = 16384


def _trampoline(fn, args, kwargs):
    return fn(*args, **kwargs)


_trampoline.__code__ = _trampoline.__code__.replace(
    co_stacksize=_trampoline.__code__.co_stacksize + FRAME_SLOTS)


def on_fresh_stack(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, its frames on a fresh 128 KiB block of the frame stack
    (see the module docstring); exceptions propagate unchanged."""
    return _trampoline(fn, args, kwargs)
