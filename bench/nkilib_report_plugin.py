"""pytest plugin for ``bench/nkilib_sample.py``: per-test limits and a JSON-lines report.

Loaded with ``-p nkilib_report_plugin`` (``bench/`` on PYTHONPATH).  Environment:

- ``NKILIB_REPORT``: file to which one JSON object per test phase report is appended
  (``{"nodeid", "when", "outcome", "message", "where", "duration", "nki", "rss_gb"}``;
  ``rss_gb``: the test's peak resident memory as the watchdog sampled it); written by
  the main pytest process (the xdist controller, not its workers), line by line, so the
  results of a run killed by an outer timeout are kept.  ``nki`` (call phase): nki-mlir's
  own time in the test, per phase ``[wall s, thread CPU s]`` (``compile``, ``trace``,
  ``pass:<name>``, ``run``, ``call``, and ``nki``: all of nki-mlir's wall time;
  :mod:`nkilib_timing`), measured in the process running the
  test and passed to the controller as a user property;
- ``NKILIB_SELECT``: file of test ids (one a line, relative to the rootdir): every other
  collected test is deselected.  The sample passes the ids' *files* as arguments and
  selects here, because pytest given 150 parametrized ids one by one re-generates
  the heavy parametrizations of the suite's modules per id (minutes on a loaded machine);
- ``NKILIB_TEST_TIMEOUT``: seconds of nki-mlir's own time a test may take (default 0 =
  none), what issue 17's "slowest test <= 60 s" counts: the CPU seconds of the process
  while nki-mlir traces, compiles or runs a kernel (:func:`nkilib_timing.busy`; CPU, so
  that other processes loading the machine do not stop a test), and ``NKILIB_TEST_TIMEOUT_WALL``
  (default 0 = none) the wall seconds of the same intervals (a backstop for a test that
  waits instead of computing);
- ``NKILIB_HARNESS_TIMEOUT``: seconds the suite's own code may take in a test's call phase
  with nki-mlir not running (its input generation, golden and validation; default 0 = none);
- ``NKILIB_MAX_RSS_GB``: resident memory (GiB) the process running the test may reach
  (default 0 = none): some of the suite's inputs take several GiB, and two workers that each
  hold 10 GiB would exhaust a 23 GB machine.  Past 1.2 times the limit the process is ended
  (:class:`_Watchdog`), its test reported as failed by :class:`MemoryLimit`;
- ``NKILIB_RSS_LOG``: file to which one JSON object per test is appended (by the controller)
  with the resident memory (GiB) of the process that ran it, ``{"nodeid", "worker", "pid",
  "start", "end"}``: ``start`` before its setup, ``end`` after its teardown, each after a
  ``gc.collect()`` (so cycles do not count); what a worker keeps from one test to the next
  (what the simulator may retain across tests) is the next test's ``start`` minus the
  first test's.  With ``NKILIB_RSS_DROP=1`` (a measurement: every test then compiles its
  kernels afresh) ``end`` is followed by ``trimmed`` (after glibc's ``malloc_trim``: memory
  freed but kept by the allocator) and ``dropped`` (after nki-mlir forgets its in-memory
  kernels, warm-call guards and plans and pooled interpreter states, :func:`_drop_ours`):
  ``trimmed - dropped`` is what those hold.  ``calls``: per kernel call through
  ``nki.cpu_simulate`` in the test, ``[before, peak, after]`` GiB (``peak`` sampled every
  0.05 s during the call, :func:`_rss_calls`): what nki-mlir adds while it runs and keeps
  (its outputs included) when it returns.

The limits are checked twice a second by a watchdog thread, which interrupts the test's
thread with ``SIGALRM`` (:func:`signal.pthread_kill`; the handler raises, the method
pytest-timeout calls "signal") when one is exceeded; the test fails with
:class:`TestTimeout`, :class:`HarnessTimeout` or :class:`MemoryLimit`, whose message names
the limit's variable and says where the test was (:func:`timeout_site`): in nki-mlir
(tracing, a pass or the interpreter: a frame of ``nki_mlir`` / ``nki_cpu_simulator`` on
the stack) or in the suite's own code with nki-mlir not running.  A Python signal handler
runs between bytecodes: one NumPy call that allocates more than the memory limit still
completes (the limit then strikes right after it, or the process is ended past 1.2 times it).  If the harness swallows the exception,
it is raised again every 30 s.
"""
from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
import time

import pytest

import nkilib_timing


class TestTimeout(Exception):
    """nki-mlir's time in the test exceeded NKILIB_TEST_TIMEOUT seconds."""

    __test__ = False  # not a test class


class HarnessTimeout(Exception):
    """The suite's own code in the test exceeded NKILIB_HARNESS_TIMEOUT seconds."""


class MemoryLimit(Exception):
    """The process running the test exceeded NKILIB_MAX_RSS_GB of resident memory."""


_OURS = ("/nki_mlir/", "/nki_cpu_simulator/")


def timeout_site(frame, running: bool = True) -> str:
    """Where a test stood when a limit struck, from the interrupted ``frame``:
    ``"in nki-mlir at <file:line>"`` (the innermost nki-mlir frame on the stack, while
    nki-mlir runs: ``running``, :func:`nkilib_timing.busy`) or ``"in the suite's code at
    <file:line> (nki-mlir not running)"`` (the innermost frame outside Python's, the
    site-packages' and nki-mlir's own files; when the suite called a helper of
    ``nki_cpu_simulator`` or ``nki_mlir`` outside a kernel, e.g. the ``neuron_dtypes``
    stand-in for a golden, ``; inside <file:line>`` names it)."""
    ours = suite = None
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        here = f"{fn}:{f.f_lineno}"
        if any(m in fn for m in _OURS):
            ours = ours or here
        elif suite is None and not fn.startswith(("<", _STDLIB)) and "site-packages" not in fn \
                and not fn.endswith("nkilib_report_plugin.py"):
            suite = here
        f = f.f_back
    if ours is not None and running:
        return f"in nki-mlir at {ours}"
    inside = f"; inside {ours}" if ours is not None else ""
    return f"in the suite's code at {suite or '?'} (nki-mlir not running{inside})"


_STDLIB = os.path.dirname(os.__file__)


def _message(report) -> tuple[str, str]:
    """(first line of the error, "path:line" of the crash) of a failed report."""
    lr = report.longrepr
    crash = getattr(lr, "reprcrash", None)
    if crash is not None:
        msg = crash.message or ""
        where = f"{crash.path}:{crash.lineno}"
    elif isinstance(lr, tuple) and len(lr) == 3:  # skip: (path, line, reason)
        msg, where = str(lr[2]), f"{lr[0]}:{lr[1]}"
    else:
        msg, where = str(lr or ""), ""
    first = next((ln.strip() for ln in msg.splitlines() if ln.strip()), "")
    return first, where


def pytest_runtest_logreport(report):
    props = dict(report.user_properties)
    log = os.environ.get("NKILIB_RSS_LOG")
    if log and report.when == "teardown" and "rss_end_gb" in props \
            and not os.environ.get("PYTEST_XDIST_WORKER"):
        rec = {"nodeid": report.nodeid, "worker": props.get("worker", ""),
               "pid": props.get("pid", 0), "start": props.get("rss_start_gb", 0.0),
               "end": props["rss_end_gb"]}
        rec["calls"] = props.get("rss_calls", [])
        for k in ("trimmed", "dropped"):
            if f"rss_{k}_gb" in props:
                rec[k] = props[f"rss_{k}_gb"]
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
    path = os.environ.get("NKILIB_REPORT")
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):  # xdist: the controller writes
        return
    if report.when != "call" and report.outcome == "passed":
        return
    message, where = _message(report) if report.outcome != "passed" else ("", "")
    rec = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
           "message": message, "where": where, "duration": round(report.duration, 2)}
    if props.get("nki_times") is not None and report.when == "call":
        rec["nki"] = props["nki_times"]
        rec["rss_gb"] = props.get("peak_rss_gb", 0.0)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    path = os.environ.get("NKILIB_SELECT")
    if not path:
        return
    wanted = {ln.strip() for ln in open(path, encoding="utf-8") if ln.strip()}
    keep = [it for it in items if it.nodeid in wanted]
    dropped = [it for it in items if it.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_configure(config):
    if os.environ.get("NKILIB_REPORT"):
        nkilib_timing.install()
    if os.environ.get("NKILIB_RSS_LOG"):
        _rss_calls()


_CALLS: list[list[float]] = []      # [before, peak, after] GiB per kernel call of a test


def _rss_calls() -> None:
    """Wrap ``nki.cpu_simulate(kernel)[lnc](...)`` to record each call's resident memory
    before, at its peak (a sampling thread, every 0.05 s) and after, in :data:`_CALLS`."""
    try:
        from nki_cpu_simulator import nki as sim
    except ImportError:
        return
    call = sim._CpuSimulated.__call__

    def measured(self, *args, **kwargs):
        rec = [_rss_gb(), 0.0, 0.0]
        rec[1] = rec[0]
        done = threading.Event()

        def sample():
            while not done.wait(0.05):
                rec[1] = max(rec[1], _rss_gb())
        th = threading.Thread(target=sample, daemon=True)
        th.start()
        try:
            return call(self, *args, **kwargs)
        finally:
            done.set()
            th.join()
            rec[2] = _rss_gb()
            rec[1] = max(rec[1], rec[2])
            _CALLS.append([round(v, 3) for v in rec])
    sim._CpuSimulated.__call__ = measured


def drop_unlocated_frames(exc: BaseException | None) -> None:
    """Unlink, in ``exc`` and every exception chained to it, the traceback entries with no
    line number (``tb_lineno is None``).

    A limit's exception is raised from a signal handler, at whatever instruction the test
    was running; CPython 3.11 gives some instructions no line, and pytest's failure report
    then fails on ``None - 1`` in its source lookup: an INTERNALERROR that ends the xdist
    worker and leaves the rest of the sample not run.  The entry says nothing useful to
    show (no line), and the limit's message already names where the test was."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None and tb.tb_lineno is None:
            tb = tb.tb_next
        if tb is not exc.__traceback__:
            exc.__traceback__ = tb
        while tb is not None:
            nxt = tb.tb_next
            while nxt is not None and nxt.tb_lineno is None:
                nxt = nxt.tb_next
            if nxt is not tb.tb_next:
                tb.tb_next = nxt
            tb = nxt
        exc = exc.__cause__ or exc.__context__


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.excinfo is not None:
        drop_unlocated_frames(call.excinfo.value)
    if call.when == "call" and os.environ.get("NKILIB_REPORT"):
        item.user_properties.append(("nki_times", nkilib_timing.take()))
    elif call.when == "setup" and os.environ.get("NKILIB_REPORT"):
        nkilib_timing.take()        # what ran in setup (fixtures) is not the test's
    yield


def _settled_rss_gb() -> float:
    """:func:`_rss_gb` after a full garbage collection, rounded to MiB."""
    gc.collect()
    return round(_rss_gb(), 3)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    if os.environ.get("NKILIB_RSS_LOG"):
        _CALLS.clear()
        item.user_properties.extend((("rss_start_gb", _settled_rss_gb()), ("pid", os.getpid()),
                                     ("worker", os.environ.get("PYTEST_XDIST_WORKER", ""))))
    yield


def _malloc_trim() -> None:
    """Return the C allocator's free memory to the system (glibc; nothing elsewhere)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _drop_ours() -> None:
    """Make nki-mlir forget what it keeps between calls: the in-memory compiled kernels,
    the warm-call guards and plans, the pooled interpreter states."""
    if "nki_mlir" not in sys.modules:
        return
    from nki_mlir.driver import warm
    from nki_mlir.runtime import cache, program
    cache.memory_clear()
    warm.clear()
    program.release_idle_states(0)


def _forget_last_failure() -> None:
    """Drop ``sys.last_value`` / ``last_traceback`` / ``last_exc``: pytest keeps a failed
    test's exception there (for post-mortem debugging) until the next test's call phase, and
    its traceback holds every frame of the test -- the suite's inputs and goldens, GiBs --
    alive through the next test's setup."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield
    if os.environ.get("NKILIB_REPORT") or os.environ.get("NKILIB_RSS_LOG"):
        _forget_last_failure()
    if os.environ.get("NKILIB_RSS_LOG"):
        item.user_properties.append(("rss_calls", list(_CALLS)))
        item.user_properties.append(("rss_end_gb", _settled_rss_gb()))
        if os.environ.get("NKILIB_RSS_DROP") == "1":
            _malloc_trim()
            item.user_properties.append(("rss_trimmed_gb", _settled_rss_gb()))
            _drop_ours()
            _malloc_trim()
            item.user_properties.append(("rss_dropped_gb", _settled_rss_gb()))


def _rss_gb() -> float:
    """Resident memory of this process in GiB (0 where /proc is absent)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 30
    except (OSError, ValueError, IndexError):
        return 0.0


def _env(name: str) -> float:
    return float(os.environ.get(name, "0") or 0)


#: the process is killed past this multiple of NKILIB_MAX_RSS_GB (its thread did not stop)
HARD_RSS = 1.2


def ended_record(nodeid: str, message: str, site: str, duration: float, rss: float) -> dict:
    """The record of a test whose process :class:`_Watchdog` ends: a failure, with what
    nki-mlir did in it so far (``nki``: :func:`nkilib_timing.take`, so its compiles and runs
    are known, as in a record the test's own report writes)."""
    return {"nodeid": nodeid, "when": "call", "outcome": "failed", "message": message,
            "where": site, "duration": round(duration, 2), "rss_gb": round(rss, 2),
            "nki": nkilib_timing.take()}


class _Watchdog(threading.Thread):
    """Checks one test's limits twice a second; interrupts ``target`` (a thread id) with
    SIGALRM when one is exceeded, after setting :attr:`pending` to the exception to raise.
    Past :data:`HARD_RSS` times the memory limit (the test's thread is inside one long C
    call and cannot raise), it appends the test's failure to ``NKILIB_REPORT`` itself
    (:func:`ended_record`) and ends the process (pytest-xdist then starts another worker),
    before the machine runs out of memory."""

    def __init__(self, target: int, nodeid: str, nki: float, harness: float, rss: float,
                 nki_wall: float = 0.0):
        super().__init__(daemon=True, name="nkilib-watchdog")
        self.target, self.nodeid, self.limits = target, nodeid, (nki, harness, rss)
        self.nki_wall = nki_wall
        self.stop, self.pending, self.peak_rss = threading.Event(), None, 0.0
        self.t0 = time.perf_counter()

    def kill(self, rss: float) -> None:
        frame = sys._current_frames().get(self.target)
        site = timeout_site(frame, nkilib_timing.busy()[2]) if frame is not None else "?"
        msg = (f"nkilib_report_plugin.MemoryLimit: the test's process reached {rss:.1f} GiB "
               f"resident, over {HARD_RSS:g} x NKILIB_MAX_RSS_GB = {self.limits[2]:g}: the "
               f"process was ended {site}")
        path = os.environ.get("NKILIB_REPORT")
        if path:
            rec = ended_record(self.nodeid, msg, site, time.perf_counter() - self.t0, rss)
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
        sys.stderr.write(msg + "\n")
        sys.stderr.flush()
        os._exit(70)

    def check(self, rss: float):
        nki_lim, har_lim, rss_lim = self.limits
        busy, cpu, running = nkilib_timing.busy()
        harness = time.perf_counter() - self.t0 - busy
        if nki_lim > 0 and cpu > nki_lim:
            return TestTimeout, (f"nki-mlir's time in the test exceeded {nki_lim:g} s "
                                 f"(NKILIB_TEST_TIMEOUT; CPU {cpu:.1f} s, wall {busy:.1f} s)")
        if self.nki_wall > 0 and busy > self.nki_wall:
            return TestTimeout, (f"nki-mlir's time in the test exceeded {self.nki_wall:g} s of "
                                 f"wall time (NKILIB_TEST_TIMEOUT_WALL, NKILIB_TEST_TIMEOUT; "
                                 f"CPU {cpu:.1f} s, wall {busy:.1f} s)")
        if har_lim > 0 and harness > har_lim and not running:
            return HarnessTimeout, (f"the suite's own code exceeded {har_lim:g} s "
                                    f"(NKILIB_HARNESS_TIMEOUT; nki-mlir time {busy:.1f} s)")
        if rss_lim > 0 and rss > rss_lim:
            return MemoryLimit, (f"the test's process reached {rss:.1f} GiB resident "
                                 f"(NKILIB_MAX_RSS_GB = {rss_lim:g})")
        return None

    def run(self):
        raised = None
        while not self.stop.wait(0.5):
            rss = _rss_gb()
            self.peak_rss = max(self.peak_rss, rss)
            if self.limits[2] > 0 and rss > HARD_RSS * self.limits[2]:
                self.kill(rss)
            if raised is not None and time.perf_counter() - raised < 30:
                continue        # raised: again in 30 s if the harness swallowed it
            hit = self.check(rss)
            if hit is not None:
                self.pending, raised = hit, time.perf_counter()
                signal.pthread_kill(self.target, signal.SIGALRM)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limits = (_env("NKILIB_TEST_TIMEOUT"), _env("NKILIB_HARNESS_TIMEOUT"),
              _env("NKILIB_MAX_RSS_GB"))
    if not any(v > 0 for v in limits) or not hasattr(signal, "pthread_kill") \
            or threading.current_thread() is not threading.main_thread():
        yield
        return
    dog = _Watchdog(threading.get_ident(), item.nodeid, *limits,
                    nki_wall=_env("NKILIB_TEST_TIMEOUT_WALL"))

    def _expired(signum, frame):
        if dog.pending is not None:
            exc, what = dog.pending
            raise exc(f"{what} {timeout_site(frame, nkilib_timing.busy()[2])}")

    old = signal.signal(signal.SIGALRM, _expired)
    dog.start()
    try:
        yield
    finally:
        dog.stop.set()
        dog.join()
        signal.signal(signal.SIGALRM, old)
        item.user_properties.append(("peak_rss_gb", round(dog.peak_rss, 2)))
