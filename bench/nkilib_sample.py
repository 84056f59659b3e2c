"""Run a deterministic sample of AWS's nki-library test suite with nki-mlir as the simulator.

Collects the suite as ``bench/nkilib_collect.py`` does (``--test-mode simulation``,
``-p nki_cpu_simulator.stubs``; ``--fast`` collection, i.e. without the
``coverage_parametrize`` tests, unless ``--full``), keeps every ``N``-th collected test id
(``--every N``; default: about ``--target`` = 150 tests), and runs them with pytest
(``-n 2`` workers with pytest-xdist, a per-test timeout through
``bench/nkilib_report_plugin.py`` and an outer timeout for the whole run).  The suite's
output directories go to a temporary directory, never into the checkout.  Prints::

    150 tests: P passed, F failed, S skipped, E errors

(``errors``: failures in setup/teardown, as pytest counts them) and the top failure
causes, grouped by the first line of the error with digits normalised, each with its
count, the crash location and one example test id.

    python bench/nkilib_sample.py [--root DIR] [--every N | --target T] [--offset K]
        [--full] [--ids-file F] [-n 2] [--test-timeout S] [--total-timeout S] [--top K]
        [--report-json F] [-- extra pytest args]
"""
from __future__ import annotations

import argparse
import json
import os
import re
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
        if cur is None or rank[kind] > rank[cur["kind"]]:
            per[r["nodeid"]] = {**r, "kind": kind}
    counts = Counter(per.get(i, {"kind": "not run"})["kind"] for i in ids)
    causes: dict[str, list[dict]] = {}
    for i in ids:
        r = per.get(i)
        if r is not None and r["kind"] in ("failed", "error"):
            causes.setdefault(cause_key(r["message"]), []).append(r)
    return {"per": per, "counts": counts, "causes": causes}


def as_arg(root: Path, nodeid: str) -> str:
    """A collected id as a command-line argument for pytest run in ``root``."""
    path = nodeid.split("::", 1)[0]
    if not (root / path).exists() and (root / "test" / path).exists():
        return f"test/{nodeid}"
    return nodeid


def run_sample(root: Path, ids: list[str], workers: int, test_timeout: float,
               total_timeout: float, extra: list[str]) -> tuple[list[dict], float, bool]:
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
           "-o", f"faulthandler_timeout={int(test_timeout * 2) if test_timeout > 0 else 0}",
           "--disable-no-tests-failure", "-rN", "--no-header",
           *(["-n", str(workers)] if workers > 1 else []), *extra, f"@{argfile}"]
    env = nkilib_collect.collect_env(root)
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH), env["PYTHONPATH"]])
    env["NKILIB_REPORT"] = str(report)
    env["NKILIB_SELECT"] = str(select)
    env["NKILIB_TEST_TIMEOUT"] = str(test_timeout)
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
    ap.add_argument("--test-timeout", type=float, default=120, help="seconds per test (default 120)")
    ap.add_argument("--total-timeout", type=float, default=1080,
                    help="seconds for the whole pytest run (default 1080)")
    ap.add_argument("--top", type=int, default=15, help="failure causes to show (default 15)")
    ap.add_argument("--report-json", type=Path, help="write per-test outcomes here")
    ap.add_argument("extra", nargs="*", help="extra pytest arguments (after --)")
    ns = ap.parse_args(argv)
    if not (ns.root / "test" / "conftest.py").exists():
        print(f"nki-library test suite not found under {ns.root}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    ids = collect_ids(ns.root, ns.full, ns.ids_file)
    every = ns.every or max(1, round(len(ids) / ns.target))
    chosen = sample(ids, every, ns.offset)
    print(f"collected {len(ids)} test ids in {time.perf_counter() - t0:.0f}s; "
          f"running every {every}th (offset {ns.offset % every}): {len(chosen)} tests")
    extra = ns.extra if ns.full else ["--skip-coverage-parametrize", *ns.extra]
    records, dt, timed_out = run_sample(ns.root, chosen, ns.workers, ns.test_timeout,
                                        ns.total_timeout, extra)
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
    if ns.report_json:
        ns.report_json.write_text(json.dumps({"ids": chosen, "per": s["per"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
