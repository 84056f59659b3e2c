"""One BLAS thread while the interpreter runs a kernel.

The interpreter computes each ``nisa.matmul`` with one ``np.matmul`` of a tile (``K <= 128``
partitions, ``M <= 128`` stationary columns, ``N <= 512`` moving columns: at most 67 MFLOP
per instruction), far too small for the BLAS library's own threads to pay for their
start-up and hand-off.  With NumPy's OpenBLAS left at its default (one thread per core) they
cost more than they give, and under load they multiply: the instances of an LNC2 launch run
in two threads (:mod:`.spmd`), each BLAS call wakes the library's threads, and a test suite
run with ``pytest -n auto`` has one such process per core.  Measured on a 2-core machine,
one nki-library MoE test (``test_moe_blockwise_mm_kernel_lnc2``, LNC2, ~75k matmul
instructions per instance): alone, 24.7 s wall / 44.4 s CPU of nki-mlir time with OpenBLAS
at 2 threads, 13.8 s wall / 23.7 s CPU at 1; beside a second pytest worker, 185 s wall /
120 s CPU at 2 threads.

So a run sets every loaded BLAS library (found by ``threadpoolctl``) to one thread and puts
back what it found when the outermost of nested runs ends: a launch whose instances run in
threads (:func:`.spmd.run_instances`) sets it in the launching thread before it starts them,
since a count set there holds in the threads it starts, while one set from such a thread
may not take (seen with NumPy's OpenBLAS 0.3.31 once the main thread had set and restored
it).  A library already at one thread (e.g. ``OPENBLAS_NUM_THREADS=1``) is left alone.
The setting is process-wide while a run lasts: NumPy code the caller runs in another thread
at the same time gets one BLAS thread too.  Cost: ~1.5 us per run (two calls into the
library), ~0.4 us when nothing is changed.
"""
from __future__ import annotations

import threading

_LOCK = threading.Lock()
#: runs in progress (the outermost sets the limit, the last to end restores it)
_depth = 0
#: ``(library controller, its thread count before the outermost run)`` to restore
_saved: list[tuple[object, int]] = []
#: the loaded BLAS libraries' ``threadpoolctl`` controllers (None until first needed)
_controllers: tuple | None = None


def _blas_libraries() -> tuple:
    """The ``threadpoolctl`` controllers of the BLAS libraries loaded in this process (found
    once: NumPy's BLAS is loaded before any kernel runs); () without ``threadpoolctl``."""
    global _controllers
    if _controllers is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:     # pragma: no cover - a declared dependency
            _controllers = ()
        else:
            _controllers = tuple(lc for lc in ThreadpoolController().lib_controllers
                                 if lc.user_api == "blas")
    return _controllers


def enter() -> None:
    """A run starts: the first of overlapping runs sets each BLAS library to one thread."""
    global _depth
    with _LOCK:
        _depth += 1
        if _depth == 1:
            for lib in _blas_libraries():
                n = lib.get_num_threads()
                if n is not None and n != 1:
                    lib.set_num_threads(1)
                    _saved.append((lib, n))


def leave() -> None:
    """A run ended: the last of overlapping runs restores the thread counts it found."""
    global _depth
    with _LOCK:
        _depth -= 1
        if _depth == 0:
            for lib, n in _saved:
                lib.set_num_threads(n)
            _saved.clear()


def current_threads() -> list[int]:
    """The loaded BLAS libraries' thread counts now (for tests and reports)."""
    return [lib.get_num_threads() for lib in _blas_libraries()]
