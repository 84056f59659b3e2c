"""Where the variants of a sweep are evaluated.

- :class:`InlineRunner` -- in this process, one after another (``workers=1``);
- :class:`PoolRunner` -- a local process pool (``concurrent.futures``; ``workers``
  processes, default ``os.cpu_count()``).  On Linux the workers are forked, so they
  inherit the kernel, the arguments and the reference; elsewhere they are spawned and
  import the kernel from its file;
- :class:`RayRunner` -- one Ray task per variant (``ray_address``: ``"local"`` starts or
  joins a local instance, ``"auto"`` an existing cluster, or any address ``ray.init``
  takes).  Tasks import the kernel from its source file path and name (the file must be
  readable on every node, and nki-mlir installed there), get the arguments and reference
  once through the object store, and are retried (``max_retries``) when a worker dies.

Every runner's :meth:`map` yields ``(index, row dict)`` as variants finish, with a tqdm
progress bar when tqdm is installed and stderr is a terminal.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterator

from .variant import Options, evaluate

#: Ray task retries after a worker process dies
RAY_MAX_RETRIES = 2


def progress(total: int, desc: str):
    """A tqdm bar on stderr when tqdm is installed and stderr is a terminal, else None."""
    if total <= 1 or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False)


def _died(params: dict, why: str) -> dict:
    return {"params": dict(params), "status": "worker died", "reason": why, "checked": False}


class InlineRunner:
    """Evaluate in this process."""

    name = "inline"

    def __init__(self, kernel: Any, opts: Options, reference: tuple | None):
        self.kernel, self.opts, self.reference = kernel, opts, reference

    def map(self, batch: list[dict], desc: str = "") -> Iterator[tuple[int, dict]]:
        bar = progress(len(batch), desc)
        for i, p in enumerate(batch):
            yield i, evaluate(self.kernel, p, self.opts, self.reference)
            if bar:
                bar.update()
        if bar:
            bar.close()

    def close(self) -> None:
        pass


# ------------------------------------------------------------------- process pool

_WORKER: dict = {}


def _init_worker(kernel_or_ref: Any, opts: Options, reference: tuple | None) -> None:
    from .space import KernelRef, resolve
    if isinstance(kernel_or_ref, KernelRef):
        kernel_or_ref = resolve(kernel_or_ref)
    _WORKER.update(kernel=kernel_or_ref, opts=opts, reference=reference)


def _pool_task(params: dict) -> dict:
    return evaluate(_WORKER["kernel"], params, _WORKER["opts"], _WORKER["reference"])


class PoolRunner:
    """A local process pool of ``workers`` processes.

    At most ``workers`` variants are in flight, so when a worker process dies (the pool
    breaks) only those few are affected: each is run again alone in a fresh process, which
    tells the variant that kills its worker (``worker died``) from the bystanders, and the
    pool is rebuilt for the rest."""

    def __init__(self, kernel: Any, ref: Any, opts: Options, reference: tuple | None, workers: int):
        methods = multiprocessing.get_all_start_methods()
        if "fork" in methods:
            ctx, payload = multiprocessing.get_context("fork"), kernel   # inherited, not pickled
        else:
            if ref is None:
                from ..errors import NKIError
                raise NKIError("tune(workers>1) on this platform imports the kernel in each "
                               "worker: define it at module level of a file (or use workers=1)",
                               category="bad autotune option")
            ctx, payload = multiprocessing.get_context("spawn"), ref
        self.workers = workers
        self.name = f"process pool ({workers} workers)"
        self._new = lambda n: ProcessPoolExecutor(n, mp_context=ctx, initializer=_init_worker,
                                                  initargs=(payload, opts, reference))
        self.pool = self._new(workers)

    def map(self, batch: list[dict], desc: str = "") -> Iterator[tuple[int, dict]]:
        bar = progress(len(batch), desc)
        queue = list(range(len(batch)))[::-1]
        running: dict = {}
        try:
            while queue or running:
                while queue and len(running) < self.workers:
                    i = queue.pop()
                    running[self.pool.submit(_pool_task, batch[i])] = i
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = []
                for f in done:
                    i = running.pop(f)
                    try:
                        row = f.result()
                    except BrokenProcessPool:
                        broken.append(i)
                        continue
                    yield i, row
                    if bar:
                        bar.update()
                if broken:       # the pool is dead: every running variant failed with it
                    broken += [running[f] for f in running]
                    running.clear()
                    self.pool.shutdown(wait=False, cancel_futures=True)
                    for i in sorted(broken):
                        yield i, self._alone(batch[i])
                        if bar:
                            bar.update()
                    self.pool = self._new(self.workers)
        finally:
            for f in running:
                f.cancel()
            if bar:
                bar.close()

    def _alone(self, params: dict) -> dict:
        """Evaluate one variant in a fresh one-process pool."""
        pool = self._new(1)
        try:
            return pool.submit(_pool_task, params).result()
        except BrokenProcessPool:
            return _died(params, "its worker process died (run alone: the variant itself "
                                 "kills the process, e.g. out of memory)")
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


# --------------------------------------------------------------------------- Ray

_RAY_TASK = None


def _ray_evaluate(ref: Any, opts: Options, reference: tuple | None, params: dict) -> dict:
    """The body of a Ray task: import the kernel from its file (once per worker process)."""
    from .space import resolve
    return evaluate(resolve(ref), params, opts, reference)


def ray_init(address: str):
    """Import Ray and connect (``"local"``: join this process's instance or start one)."""
    try:
        import ray
    except ImportError:
        from ..errors import NKIError
        raise NKIError("tune(ray_address=...) needs Ray: pip install 'nki-mlir[ray]' "
                       "(or pip install 'ray[default]')", category="bad autotune option") from None
    if not ray.is_initialized():
        pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {"PYTHONPATH": os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH")) if p)}
        kwargs: dict = {"ignore_reinit_error": True, "log_to_driver": False}
        if address == "local":
            kwargs["runtime_env"] = {"env_vars": env}   # workers import this nki_mlir
        else:
            kwargs["address"] = address
        ray.init(**kwargs)
    return ray


def require_ref(ref: Any) -> None:
    """Ray tasks import the kernel from its file: it must be a module-level kernel."""
    if ref is None:
        from ..errors import NKIError
        from ..diagnostics import caller_loc
        raise NKIError("tune(ray_address=...) imports the kernel in each Ray task from its "
                       "source file: define it at module level of a .py file",
                       caller_loc(), category="bad autotune option")


class RayRunner:
    """One Ray task per variant."""

    def __init__(self, ref: Any, opts: Options, reference: tuple | None, address: str):
        global _RAY_TASK
        require_ref(ref)
        self.ray = ray_init(address)
        if _RAY_TASK is None:
            _RAY_TASK = self.ray.remote(max_retries=RAY_MAX_RETRIES)(_ray_evaluate)
        self.ref = ref
        self.opts_ref = self.ray.put(opts)
        self.reference_ref = self.ray.put(reference)
        res = self.ray.cluster_resources()
        self.name = f"ray ({int(res.get('CPU', 0))} CPUs)"

    def map(self, batch: list[dict], desc: str = "") -> Iterator[tuple[int, dict]]:
        ray = self.ray
        bar = progress(len(batch), desc)
        refs = {_RAY_TASK.remote(self.ref, self.opts_ref, self.reference_ref, p): i
                for i, p in enumerate(batch)}
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for r in done:
                    i = refs[r]
                    try:
                        row = ray.get(r)
                    except ray.exceptions.RayError as exc:   # retries exhausted
                        row = _died(batch[i], f"the Ray task failed: {str(exc).splitlines()[0]}")
                    yield i, row
                    if bar:
                        bar.update()
        finally:
            for r in pending:
                ray.cancel(r)
            if bar:
                bar.close()

    def close(self) -> None:
        pass


def make_runner(kernel: Any, ref: Any, opts: Options, reference: tuple | None,
                workers: int | None, ray_address: str | None, n: int):
    """The runner for ``n`` variants: Ray when ``ray_address`` is given, else a process pool
    when more than one worker and variant, else inline."""
    if ray_address:
        return RayRunner(ref, opts, reference, ray_address)
    w = min(workers or os.cpu_count() or 1, n)
    if w <= 1:
        return InlineRunner(kernel, opts, reference)
    return PoolRunner(kernel, ref, opts, reference, w)
