"""Memory retries of ``bench/nkilib_suite.py``: tests the per-worker memory limit stopped in
the suite's own code, run again alone with the whole machine's limit.

With ``-n 2`` workers each worker may hold ``--max-rss-gb`` (default 60% of RAM / workers);
some of nki-library's tests make inputs and goldens of 8-22 GiB in their own code (float64
normal draws, e.g. ``test_attention_block_tkg.py`` KV caches), which stops them there
(:data:`nkilib_causes.MEMORY_SUITE`) although nki-mlir never ran out of anything.  After the
parallel run each such test is run again, one at a time in one process (``-n 1``: no other
worker shares the machine), with ``--retry-max-rss-gb`` (default :func:`machine_rss_gb`: the
process is ended at 85% of the machine's memory, or at its available memory when other
processes hold more than the rest).  The retry's outcome replaces the first:
a test that passes counts as passed, one that fails otherwise is a failure of that cause, and
one stopped again in the suite's code stays a failure (the memory cause), listed with its
peak resident memory and the suite's ``file:line`` where it stood -- unless nki-mlir had not
compiled or run anything in the test yet: then the suite's inputs alone exceed the machine,
and ``nkilib_causes`` excludes it as a defect of the suite (with that evidence).
"""
from __future__ import annotations

from pathlib import Path

import nkilib_causes
import nkilib_report_plugin
import nkilib_sample

#: the share of the machine's memory at which a retried test's process is ended
MACHINE_SHARE = 0.85


def available_gb() -> float:
    """``MemAvailable`` of ``/proc/meminfo`` in GiB (the machine's memory where absent)."""
    try:
        with open("/proc/meminfo") as f:
            for ln in f:
                if ln.startswith("MemAvailable:"):
                    return int(ln.split()[1]) / 2 ** 20
    except (OSError, ValueError, IndexError):
        pass
    return nkilib_sample.machine_gb()


def machine_rss_gb(share: float = MACHINE_SHARE, available: float | None = None) -> float:
    """The ``--max-rss-gb`` of a retry: the process is ended (:data:`HARD_RSS` times the
    limit) at ``share`` of the machine's memory, or at what the machine has available
    (``available`` GiB, default :func:`available_gb`: other processes' memory is not ours
    to take), whichever is less; it is stopped between bytecodes at the limit."""
    avail = available_gb() if available is None else available
    cap = min(share * nkilib_sample.machine_gb(), avail)
    return round(cap / nkilib_report_plugin.HARD_RSS, 1)


def memory_stopped(per: dict, ids: list[str]) -> list[str]:
    """The ids among ``ids`` whose failure is the memory limit in the suite's own code."""
    return [i for i in ids if i in per and per[i]["kind"] in ("failed", "error")
            and nkilib_causes.classify(per[i]) is None
            and nkilib_causes.cause(per[i], nkilib_sample.cause_key) == nkilib_causes.MEMORY_SUITE]


def retry(run, ids: list[str]) -> tuple[dict, float]:
    """Run ``ids`` again with ``run(ids) -> (records, seconds, timed out)`` (one process);
    a test whose process was ended takes the rest of that run with it, so the tests without
    a record are run again until every test has one or a run records nothing new.
    Returns (per-test outcome as :func:`nkilib_sample.summarise` gives it, seconds)."""
    per: dict = {}
    left, total = list(ids), 0.0
    while left:
        records, dt, _timed_out = run(left)
        total += dt
        got = nkilib_sample.summarise(records, left)["per"]
        per.update(got)
        if not got:
            break
        left = [i for i in left if i not in per]
    return per, total


def merge(per: dict, again: dict) -> dict:
    """``per`` with each retried test's outcome replaced by its retry's (``first``: the first
    outcome's message and peak memory, for the report)."""
    out = dict(per)
    for i, r in again.items():
        first = per.get(i, {})
        out[i] = {**r, "first": {"message": first.get("message", ""),
                                 "rss_gb": first.get("rss_gb", 0.0)}}
    return out


def report(ids: list[str], again: dict, limit: float, first_limit: float,
           seconds: float) -> list[str]:
    """The report's lines on the retries: which passed, which failed otherwise and which
    still exceeded the machine (peak GiB and the suite's ``file:line``)."""
    if not ids:
        return []
    buckets: dict[str, list[str]] = {"passed": [], "exceeded": [], "other": []}
    lines = []
    for i in ids:
        r = again.get(i)
        kind = r["kind"] if r else "not run"
        peak = f"{r.get('rss_gb', 0.0):5.1f} GiB" if r else "    ? GiB"
        if kind == "passed":
            buckets["passed"].append(i)
            lines.append(f"  passed on retry     peak {peak}  {i[:140]}")
        elif r is not None and kind in ("failed", "error") and \
                nkilib_causes.cause(r, nkilib_sample.cause_key) == nkilib_causes.MEMORY_SUITE:
            buckets["exceeded"].append(i)
            lines.append(f"  exceeded the machine peak {peak} at {nkilib_causes.site(r)}  "
                         f"{i[:120]}")
        else:
            buckets["other"].append(i)
            what = (r.get("message", "") if r else "")[:120]
            lines.append(f"  {kind} on retry{'':<6}peak {peak}  {i[:120]}: {what}")
    head = (f"memory retries ({len(ids)} tests the --max-rss-gb {first_limit:g} GiB stopped in the "
            f"suite's code, run again alone with --retry-max-rss-gb {limit:g} GiB, ended at "
            f"{nkilib_report_plugin.HARD_RSS * limit:.1f}; {seconds:.0f}s): "
            f"{len(buckets['passed'])} passed, {len(buckets['exceeded'])} still exceeded the "
            f"machine, {len(buckets['other'])} other outcomes")
    return [head, *lines]


def add_args(ap) -> None:
    ap.add_argument("--no-retry", action="store_true",
                    help="do not run the tests the memory limit stopped again alone")
    ap.add_argument("--retry-max-rss-gb", type=float, default=None,
                    help="--max-rss-gb of the memory retries (default: the process is ended "
                         "at 85%% of the machine's memory or at its available memory, "
                         "whichever is less)")


def run_retries(ns, per: dict, chosen: list[str], first_limit: float, extra: list[str]
                ) -> tuple[dict, list[str]]:
    """:func:`memory_stopped` tests of ``chosen`` run again alone (unless ``ns.no_retry``);
    returns (the merged outcomes, the report's lines)."""
    ids = [] if ns.no_retry else memory_stopped(per, chosen)
    if not ids:
        return per, []
    limit = ns.retry_max_rss_gb or machine_rss_gb()

    def run(left: list[str]):
        return nkilib_sample.run_sample(
            Path(ns.root), left, 1, ns.test_timeout, ns.total_timeout or 10 ** 7, extra,
            harness_timeout=ns.harness_timeout, max_rss_gb=limit,
            test_timeout_wall=ns.test_timeout_wall, keep_outputs=ns.keep_outputs)

    print(f"retrying {len(ids)} tests the memory limit stopped in the suite's code, alone "
          f"(--retry-max-rss-gb {limit:g})", flush=True)
    again, dt = retry(run, ids)
    return merge(per, again), report(ids, again, limit, first_limit, dt)
