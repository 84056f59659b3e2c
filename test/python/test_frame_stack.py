"""on_fresh_stack (nki_mlir/driver/frame_stack.py, issue 17): a phase whose calls go back and
forth over a boundary of CPython's frame-stack chunks must not map and fault in a fresh
chunk per call, wherever the caller's stack ends.  Counted in page faults, not timed."""
import resource
import sys

import pytest

from nki_mlir.driver.frame_stack import on_fresh_stack

CALLS = 2000


def _leaf(x):
    return x + 1


def _work():
    """CALLS calls, each pushing and popping one frame right above this one."""
    t = 0
    for i in range(CALLS):
        t = _leaf(t)
    return t


def _padded(slots: int):
    """A caller whose frame holds ``slots`` value-stack slots: shifts where _work's frames land."""
    def pad(fn):
        return fn()
    pad.__code__ = pad.__code__.replace(co_stacksize=pad.__code__.co_stacksize + slots)
    return pad


def _faults(run) -> int:
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    assert run() == CALLS
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


def _worst(wrap) -> int:
    # shift the caller's stack in 8-slot (64-byte) steps over one 16 KiB chunk
    return max(_faults(lambda p=_padded(s): p(lambda: wrap(_work))) for s in range(0, 2048 + 64, 8))


@pytest.mark.skipif(sys.version_info < (3, 11) or not hasattr(resource, "RUSAGE_THREAD"),
                    reason="chunked frame stack (CPython 3.11+), per-thread rusage (Linux)")
def test_fresh_stack_stops_chunk_thrash():
    # the test's premise: called plainly, some caller depth puts _leaf's frame first in a
    # chunk, and each of its calls maps and faults in that chunk again
    assert _worst(lambda f: f()) >= CALLS
    # on a fresh block the calls stay inside one chunk, whatever the caller's depth
    assert _worst(lambda f: on_fresh_stack(f)) < CALLS // 10


def test_fresh_stack_passes_results_and_errors():
    assert on_fresh_stack(divmod, 7, 2) == (3, 1)
    assert on_fresh_stack(lambda *a, **k: (a, k), 1, b=2) == ((1,), {"b": 2})
    with pytest.raises(ZeroDivisionError):
        on_fresh_stack(divmod, 1, 0)
