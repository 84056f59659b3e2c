"""pytest plugin for ``bench/nkilib_sample.py``: a per-test timeout and a JSON-lines report.

Loaded with ``-p nkilib_report_plugin`` (``bench/`` on PYTHONPATH).  Environment:

- ``NKILIB_REPORT``: file to which one JSON object per test phase report is appended
  (``{"nodeid", "when", "outcome", "message", "where", "duration", "nki"}``); written by
  the main pytest process (the xdist controller, not its workers), line by line, so the
  results of a run killed by an outer timeout are kept.  ``nki`` (call phase): nki-mlir's
  own time in the test, per phase ``[wall s, thread CPU s]`` (``compile``, ``trace``,
  ``pass:<name>``, ``run``; :mod:`nkilib_timing`), measured in the process running the
  test and passed to the controller as a user property;
- ``NKILIB_SELECT``: file of test ids (one a line, relative to the rootdir): every other
  collected test is deselected.  The sample passes the ids' *files* as arguments and
  selects here, because pytest given 150 parametrized ids one by one re-generates
  the heavy parametrizations of the suite's modules per id (minutes on a loaded machine);
- ``NKILIB_TEST_TIMEOUT``: seconds a test's call phase may take (default 0 = none).  It
  is enforced with ``SIGALRM`` in the process running the test (the method
  pytest-timeout calls "signal"): the test fails with :class:`TestTimeout`, whose message
  says where the test was when the time ran out (:func:`timeout_site`): in nki-mlir
  (tracing, a pass or the interpreter: a frame of ``nki_mlir`` / ``nki_cpu_simulator`` on
  the stack) or in the suite's own code with nki-mlir not running (its input generation,
  its golden, its validation).
"""
from __future__ import annotations

import json
import os
import signal

import pytest

import nkilib_timing


class TestTimeout(Exception):
    """The test's call phase exceeded NKILIB_TEST_TIMEOUT seconds."""

    __test__ = False  # not a test class


_OURS = ("/nki_mlir/", "/nki_cpu_simulator/")


def timeout_site(frame) -> str:
    """Where a test stood when its time ran out, from the interrupted ``frame``:
    ``"in nki-mlir at <file:line>"`` (the innermost nki-mlir frame on the stack) or
    ``"in the suite's code at <file:line> (nki-mlir not running)"`` (the innermost frame
    outside Python's and the site-packages' own files)."""
    ours = suite = None
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        here = f"{fn}:{f.f_lineno}"
        if ours is None and any(m in fn for m in _OURS):
            ours = here
        elif suite is None and not fn.startswith(("<", _STDLIB)) and "site-packages" not in fn \
                and not fn.endswith("nkilib_report_plugin.py"):
            suite = here
        f = f.f_back
    if ours is not None:
        return f"in nki-mlir at {ours}"
    return f"in the suite's code at {suite or '?'} (nki-mlir not running)"


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
    path = os.environ.get("NKILIB_REPORT")
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):  # xdist: the controller writes
        return
    if report.when != "call" and report.outcome == "passed":
        return
    message, where = _message(report) if report.outcome != "passed" else ("", "")
    rec = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
           "message": message, "where": where, "duration": round(report.duration, 2)}
    nki = dict(report.user_properties).get("nki_times")
    if nki is not None and report.when == "call":
        rec["nki"] = nki
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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.when == "call" and os.environ.get("NKILIB_REPORT"):
        item.user_properties.append(("nki_times", nkilib_timing.take()))
    elif call.when == "setup" and os.environ.get("NKILIB_REPORT"):
        nkilib_timing.take()        # what ran in setup (fixtures) is not the test's
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    seconds = float(os.environ.get("NKILIB_TEST_TIMEOUT", "0") or 0)
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def _expired(signum, frame):
        raise TestTimeout(f"test exceeded {seconds:g} s (NKILIB_TEST_TIMEOUT) "
                          f"{timeout_site(frame)}")

    old = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
