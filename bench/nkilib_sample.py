"""Run a deterministic sample of AWS's nki-library test suite with nki-mlir as the simulator.

Collects the suite as ``bench/nkilib_collect.py`` does (``--test-mode simulation``,
``-p nki_cpu_simulator.stubs``; ``--fast`` collection, i.e. without the
``coverage_parametrize`` tests, unless ``--full``), keeps every ``N``-th collected test id
(``--every N``; default: about ``--target`` = 150 tests), and runs them with pytest
(``-n 2`` workers with pytest-xdist, per-test limits through
``bench/nkilib_report_plugin.py`` -- ``--test-timeout`` seconds of nki-mlir time (default
120; ``--test-timeout-wall``, default 600, bounds its wall time), ``--harness-timeout`` seconds of the suite's own code with nki-mlir not running
(default 600), ``--max-rss-gb`` resident memory per worker (default 60% of RAM / workers)
-- and an outer timeout for the whole run), with a fresh
nki-mlir compile cache unless ``--warm-cache``.  The suite's
output directories go to a temporary directory, never into the checkout.  Prints::

    150 tests: P passed, F failed, S skipped, E errors

(``errors``: failures in setup/teardown, as pytest counts them), the top failure
causes, grouped by the first line of the error with digits normalised, each with its
count, the crash location and one example test id, and the ``--slowest`` K tests (default
20) by nki-mlir time: per test its whole call phase (``test``, harness included: input
generation, reference, validation), nki-mlir's time (wall: all of it; CPU: compile + run),
its compile and run time (wall and thread CPU seconds, :mod:`nkilib_timing`), the harness
remainder (``test`` minus nki-mlir), the peak resident memory and the costliest compile
phase; then the slowest nki-mlir time against issue 17's 60 s goal and the slowest compile
and run over the sample.

    python bench/nkilib_sample.py [--root DIR] [--every N | --target T] [--offset K]
        [--full] [--ids-file F] [-n 2] [--test-timeout S] [--harness-timeout S]
        [--max-rss-gb G] [--total-timeout S] [--top K]
        [--report-json F] [--warm-cache] [--slowest K] [-- extra pytest args]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nkilib_collect  # noqa: E402

BENCH = Path(__file__).resolve().parent


def collect_ids(root: Path, full: bool, ids_file: Path | None) -> list[str]:
    """Test ids of the suite (cached in ``ids_file`` if given and present)."""
    if ids_file is not None and ids_file.exists():
        return [ln for ln in ids_file.read_text().splitlines() if ln.strip()]
    res, proc = nkilib_collect.run(root, fast=not full)
    if res["errors"]:
        raise SystemExit(f"collection errors: {res['error_files']}\n{proc.stdout[-3000:]}")
    ids = [ln.strip() for ln in proc.stdout.splitlines()
           if "::" in ln and not ln.startswith(("ERROR", "FAILED"))]
    if ids_file is not None:
        ids_file.write_text("\n".join(ids) + "\n")
    return ids


def sample(ids: list[str], every: int, offset: int = 0) -> list[str]:
    """Every ``every``-th id starting at ``offset`` (deterministic)."""
    return ids[offset % max(every, 1)::max(every, 1)]


_NUM = re.compile(r"\d+")


def cause_key(message: str) -> str:
    """Grouping key of a failure: its first line, digits replaced by ``#``, at most 160 chars."""
    return _NUM.sub("#", message.strip())[:160]


def summarise(records: list[dict], ids: list[str]) -> dict:
    """Outcome per test id from the plugin's JSON lines (missing ids: "not run")."""
    per: dict[str, dict] = {}
    for r in records:
        cur = per.get(r["nodeid"])
        if r["outcome"] == "failed":
            kind = "failed" if r["when"] == "call" else "error"
        else:
            kind = r["outcome"]  # "passed" (call) or "skipped"
        # a setup/teardown error outranks the call's outcome, a failure outranks a pass
        rank = {"error": 3, "failed": 2, "skipped": 1, "passed": 0}
        # the watchdog's own record of a worker it ended (nkilib_report_plugin) comes before
        # pytest-xdist's "worker crashed" error for the same test, and says more
        crash = r["message"].startswith("worker '") and cur is not None \
            and cur["kind"] in ("failed", "error")
        if not crash and (cur is None or rank[kind] > rank[cur["kind"]]):
            keep = {k: cur[k] for k in ("nki", "duration", "rss_gb") if k in cur} \
                if cur and "nki" in cur else {}
            per[r["nodeid"]] = cur = {**r, "kind": kind, **keep}
        if "nki" in r:                      # the call phase's times and duration
            cur.update(nki=r["nki"], duration=r["duration"], rss_gb=r.get("rss_gb", 0.0))
    counts = Counter(per.get(i, {"kind": "not run"})["kind"] for i in ids)
    causes: dict[str, list[dict]] = {}
    for i in ids:
        r = per.get(i)
        if r is not None and r["kind"] in ("failed", "error"):
            causes.setdefault(cause_key(r["message"]), []).append(r)
    return {"per": per, "counts": counts, "causes": causes}


def _short(nodeid: str, width: int = 70) -> str:
    """A test id shortened for a table: ``file.py::Class::test[params]`` -> ``file::test[...]``."""
    path, _, rest = nodeid.partition("::")
    name = rest.rsplit("::", 1)[-1]
    s = f"{Path(path).stem}::{name}"
    return s if len(s) <= width else s[:width - 3] + "..."


#: issue 17: "the slowest test <= 60 s (harness input generation not counted)"
GOAL_S = 60.0


def nki_seconds(t: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of nki-mlir in a test from its recorded phases: ``nki`` (all of
    nki-mlir's time; CPU of the process in it) or, in reports without it, compile + run
    (wall, and thread CPU)."""
    comp, run = t.get("compile", [0, 0]), t.get("run", [0, 0])
    if "nki" in t and t["nki"][1] > 0:
        return t["nki"][0], t["nki"][1]
    return comp[0] + run[0], comp[1] + run[1]


def slowest_table(per: dict, k: int, goal: float = GOAL_S) -> list[str]:
    """Lines of the ``k`` tests with the most nki-mlir CPU time, with their call phase
    (``test``: harness included), nki-mlir's wall and CPU, its compile and run, the harness
    (``test`` minus nki-mlir), the peak resident memory, then the slowest nki-mlir time
    against ``goal`` and the slowest compile and run."""
    rows = []
    for r in per.values():
        t = r.get("nki")
        if not t:
            continue
        comp, run = t.get("compile", [0, 0]), t.get("run", [0, 0])
        phases = {n: v for n, v in t.items() if n == "trace" or n.startswith("pass:")}
        top = max(phases.items(), key=lambda kv: kv[1][1], default=None)
        rows.append((nki_seconds(t), r, comp, run, top))
    rows.sort(key=lambda x: (-x[0][1], -x[0][0]))   # CPU: what load does not inflate
    out = [f"slowest {min(k, len(rows))} of {len(rows)} tests by nki-mlir CPU time (s; wall/cpu; "
           f"test = the call phase, harness = test - nki-mlir):",
           f"  {'test':>6} {'nki-mlir':>13} {'compile':>13} {'run':>13} {'harness':>7} "
           f"{'GiB':>4}  {'top compile phase':<22} test id"]
    for (wall, cpu), r, comp, run, top in rows[:k]:
        harness = max(0.0, r["duration"] - wall)
        ph = f"{top[0].removeprefix('pass:')} {top[1][1]:.1f}" if top else "-"
        out.append(f"  {r['duration']:6.1f} {wall:6.1f}/{cpu:<6.1f} {comp[0]:6.1f}/{comp[1]:<6.1f} "
                   f"{run[0]:6.1f}/{run[1]:<6.1f} {harness:7.1f} {r.get('rss_gb', 0):4.1f}  "
                   f"{ph:<22} {_short(r['nodeid'])}")
    if rows:
        (wall, cpu), r = rows[0][0], rows[0][1]
        over = sum(x[0][0] > goal for x in rows)
        over_cpu = sum(x[0][1] > goal for x in rows)
        verdict = "ok" if cpu <= goal else "ABOVE GOAL"
        out.append(f"slowest nki-mlir time {cpu:.1f}s cpu / {wall:.1f}s wall against the "
                   f"{goal:g} s goal: {verdict} ({over_cpu} tests above it by CPU time, {over} "
                   f"by wall time; {_short(r['nodeid'])})")
        c = max(rows, key=lambda x: x[2][0])
        u = max(rows, key=lambda x: x[3][0])
        out.append(f"slowest compile {c[2][0]:.1f}s wall / {c[2][1]:.1f}s cpu: {_short(c[1]['nodeid'])}")
        out.append(f"slowest run {u[3][0]:.1f}s wall / {u[3][1]:.1f}s cpu: {_short(u[1]['nodeid'])}")
    return out


def as_arg(root: Path, nodeid: str) -> str:
    """A collected id as a command-line argument for pytest run in ``root``."""
    path = nodeid.split("::", 1)[0]
    if not (root / path).exists() and (root / "test" / path).exists():
        return f"test/{nodeid}"
    return nodeid


def machine_gb() -> float:
    """The machine's memory in GiB (0 where ``sysconf`` cannot tell)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError):
        return 0.0


def default_max_rss(workers: int) -> float:
    """GiB per worker process: 60% of the machine's memory shared by the workers (a worker
    is ended at 1.2 times it: 72% for all of them)."""
    return round(0.6 * machine_gb() / max(workers, 1), 1)


def add_limit_args(ap: argparse.ArgumentParser) -> None:
    """The per-test limits (``bench/nkilib_report_plugin.py``), shared with nkilib_suite."""
    ap.add_argument("--test-timeout", type=float, default=120,
                    help="CPU seconds of nki-mlir per test (trace, compile, run; default 120)")
    ap.add_argument("--test-timeout-wall", type=float, default=600,
                    help="wall seconds of nki-mlir per test (a backstop; default 600)")
    ap.add_argument("--harness-timeout", type=float, default=600,
                    help="seconds per test of the suite's own code with nki-mlir not running "
                         "(input generation, golden, validation; default 600)")
    ap.add_argument("--keep-outputs", action="store_true",
                    help="keep the suite's per-test outputs (its dumped inputs: GiBs)")
    ap.add_argument("--max-rss-gb", type=float, default=None,
                    help="resident GiB per worker process (default 60%% of RAM / workers; "
                         "the process is ended at 1.2 times it)")


def _xdist(workers: int, tests: int) -> list[str]:
    """pytest-xdist arguments: a test the memory limit ends takes its process with it, so
    several tests run in xdist workers (even one worker), which xdist replaces after such an
    end (as many times as there are tests) -- in-process, the end would stop the whole run."""
    if tests <= 1 and workers <= 1:
        return []
    return ["-n", str(max(workers, 1)), "--max-worker-restart", str(tests)]


def run_sample(root: Path, ids: list[str], workers: int, test_timeout: float,
               total_timeout: float, extra: list[str],
               warm_cache: bool = False, harness_timeout: float = 0,
               max_rss_gb: float | None = None, test_timeout_wall: float = 0,
               keep_outputs: bool = False) -> tuple[list[dict], float, bool]:
    """Run ``ids`` in a fresh temp folder; (the plugin's records, seconds, stopped by
    ``total_timeout``).  The suite writes every test's inputs to its output directory (GiBs
    over a sample): unless ``keep_outputs``, it is asked to delete them after each test
    (its ``--force-local-cleanup``) and the output, artifact and cache folders are deleted
    after the run; the report and the pytest log stay."""
    tmp = Path(tempfile.mkdtemp(prefix="nkilib_sample_"))
    report = tmp / "report.jsonl"
    report.touch()
    argfile = tmp / "ids.txt"
    # the ids' files are the arguments (ids are relative to the suite's rootdir, test/, and
    # pytest runs in root); the plugin deselects every other test of those files
    files = sorted({as_arg(root, i).split("::", 1)[0] for i in ids})
    argfile.write_text("".join(f"{f}\n" for f in files))
    select = tmp / "select.txt"
    select.write_text("".join(f"{i}\n" for i in ids))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "nki_cpu_simulator.stubs",
           "-p", "nkilib_report_plugin", "-p", "no:cacheprovider", "--test-mode", "simulation",
           "-o", f"artifacts_dir={tmp / 'artifacts'}", "--output-directory", str(tmp / "out"),
           "-o", f"faulthandler_timeout="
                 f"{int(2 * (max(test_timeout, test_timeout_wall) + harness_timeout))}",
           "--disable-no-tests-failure", "-rN", "--no-header",
           *([] if keep_outputs else ["--force-local-cleanup"]),
           *_xdist(workers, len(ids)), *extra, f"@{argfile}"]
    env = nkilib_collect.collect_env(root)
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH), env["PYTHONPATH"]])
    env["NKILIB_REPORT"] = str(report)
    env["NKILIB_SELECT"] = str(select)
    env["NKILIB_TEST_TIMEOUT"] = str(test_timeout)
    env["NKILIB_TEST_TIMEOUT_WALL"] = str(test_timeout_wall)
    env["NKILIB_HARNESS_TIMEOUT"] = str(harness_timeout)
    env["NKILIB_MAX_RSS_GB"] = str(default_max_rss(workers) if max_rss_gb is None else max_rss_gb)
    if not warm_cache:      # every kernel compiled, as on a first run (the times are compiles)
        env["NKI_MLIR_CACHE_DIR"] = str(tmp / "nki-mlir-cache")
    t0 = time.perf_counter()
    timed_out = False
    with open(tmp / "pytest.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait(timeout=total_timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, 9)  # our own process group (start_new_session)
            proc.wait()
    records = [json.loads(ln) for ln in report.read_text().splitlines() if ln.strip()]
    if not keep_outputs:
        for d in ("out", "artifacts", "nki-mlir-cache"):
            shutil.rmtree(tmp / d, ignore_errors=True)
    print(f"pytest log: {tmp / 'pytest.log'}")
    return records, time.perf_counter() - t0, timed_out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=nkilib_collect.DEFAULT_ROOT)
    ap.add_argument("--every", type=int, default=0, help="keep every N-th test id (0: from --target)")
    ap.add_argument("--target", type=int, default=150, help="about this many tests (default 150)")
    ap.add_argument("--offset", type=int, default=0, help="start at this index modulo N")
    ap.add_argument("--full", action="store_true",
                    help="collect coverage_parametrize tests too (collection takes ~10 min)")
    ap.add_argument("--ids-file", type=Path, help="cache of the collected ids (read if present; "
                    "give --full too if it holds a --full collection)")
    ap.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers (default 2)")
    add_limit_args(ap)
    ap.add_argument("--total-timeout", type=float, default=1080,
                    help="seconds for the whole pytest run (default 1080)")
    ap.add_argument("--top", type=int, default=15, help="failure causes to show (default 15)")
    ap.add_argument("--report-json", type=Path, help="write per-test outcomes here")
    ap.add_argument("--warm-cache", action="store_true",
                    help="use nki-mlir's compile cache (default: a fresh one, every kernel compiled)")
    ap.add_argument("--slowest", type=int, default=20,
                    help="show the K tests with the most nki-mlir time (default 20)")
    ns = nkilib_collect.parse_suite_args(ap, argv)
    if ns is None:
        return 2
    t0 = time.perf_counter()
    ids = collect_ids(ns.root, ns.full, ns.ids_file)
    every = ns.every or max(1, round(len(ids) / ns.target))
    chosen = sample(ids, every, ns.offset)
    print(f"collected {len(ids)} test ids in {time.perf_counter() - t0:.0f}s; "
          f"running every {every}th (offset {ns.offset % every}): {len(chosen)} tests")
    extra = ns.extra if ns.full else ["--skip-coverage-parametrize", *ns.extra]
    records, dt, timed_out = run_sample(ns.root, chosen, ns.workers, ns.test_timeout,
                                        ns.total_timeout, extra, ns.warm_cache,
                                        ns.harness_timeout, ns.max_rss_gb,
                                        ns.test_timeout_wall, ns.keep_outputs)
    s = summarise(records, chosen)
    c = s["counts"]
    print(f"run: {dt:.0f}s{' (stopped by --total-timeout)' if timed_out else ''}")
    line = (f"{len(chosen)} tests: {c['passed']} passed, {c['failed']} failed, "
            f"{c['skipped']} skipped, {c['error']} errors")
    if c["not run"]:
        line += f", {c['not run']} not run"
    print(line)
    causes = sorted(s["causes"].items(), key=lambda kv: (-len(kv[1]), kv[0]))
    print(f"top failure causes ({len(causes)} distinct):")
    for _key, recs in causes[:ns.top]:
        ex = recs[0]
        print(f"  {len(recs):4d}  {ex['message'][:200]}")
        print(f"        at {ex['where']}  e.g. {ex['nodeid']}")
    for ln in slowest_table(s["per"], ns.slowest):
        print(ln)
    if ns.report_json:
        ns.report_json.write_text(json.dumps({"ids": chosen, "per": s["per"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
