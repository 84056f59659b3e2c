"""Run AWS's nki-library test suite on nki-mlir and classify every failure by its cause.

    python bench/nkilib_suite.py [PATH] [--every N | --target T] [--offset K] [--all | --full]
        [--no-unit] [--ids-file F] [-n 2] [--test-timeout S] [--harness-timeout S]
        [--max-rss-gb G] [--retry-max-rss-gb G] [--no-retry] [--total-timeout S]
        [--slowest K] [--report-json F] [--precise-fp-check]
        [-- extra pytest args]

``PATH`` is the nki-library checkout (default ``../shared/corpus/nki-library`` next to this
repository).  The suite is collected and run as ``bench/nkilib_sample.py`` does it (its own
``--test-mode simulation``, ``-p nki_cpu_simulator.stubs``, the files of
``bench/nkilib_collect.py``'s ``IGNORED`` left out): every unit test (``test/unit``; not with
``--no-unit``) and a deterministic sample of the integration tests -- every ``N``-th
(``--every``, or about ``--target`` of them, default 150) from ``--offset`` -- or all of them
(``--all``; ``--full`` also generates the ``coverage_parametrize`` tests, whose collection
takes ~10 minutes).

Each failure is put in a category of ``bench/nkilib_causes.py``: a defect of the suite itself
or a need for AWS internals (``nki.compiler.frontend``) -- these are excluded from the
denominator and listed with their count and one line of evidence (``file:line: error``) -- or
else a cause of the simulator's own, grouped by its first line.  The test files that cannot be
collected with any NKI implementation are listed too.

Per-test limits (``bench/nkilib_report_plugin.py``): ``--test-timeout`` (default 120 s) bounds
nki-mlir's own CPU time in a test (``--test-timeout-wall``, default 600 s, its wall time) -- what issue 17's "slowest test <= 60 s (harness input
generation not counted)" measures; ``--harness-timeout`` (default 600 s) bounds, separately,
the suite's own code in the test's call phase with nki-mlir not running (input generation,
golden, validation); ``--max-rss-gb`` bounds the resident memory of each worker (default 60%
of the machine's memory over the workers: some of the suite's inputs take 10 GiB).  A test
stopped by the harness or memory limit in the suite's code did not finish: it counts as a
failure and is listed with where the suite's code was; one the memory limit
stopped there is run again after the parallel run, alone, with the machine's limit
(``bench/nkilib_retry.py``: ``--retry-max-rss-gb``, ``--no-retry``), and its retry's
outcome counts, the report saying which passed on retry and which still exceeded the
machine (peak GiB and the suite's ``file:line``).  Only a retried test stopped again
*before nki-mlir compiled or ran anything in it* is excluded (the suite's inputs alone are
larger than the machine: ``nkilib_causes``' "inputs larger than this machine's memory");
one stopped after nki-mlir ran (e.g. in its golden) stays a failure, since part of the
memory may be ours.  With ``--precise-fp-check`` each numeric mismatch is run again alone
with ``NKI_PRECISE_FP=0`` (``bench/nkilib_precise.py``) and the report says whether it passes
with bf16/fp8 stored as float32; it stays counted as a failure.  The slowest
``--slowest`` tests (default 20) are shown by nki-mlir time (wall and CPU, compile and run)
next to their call phase, with the slowest nki-mlir time against the 60 s goal.  The last
lines are::

    pass ratio: P / (P + F) = R% of the collected, non-skipped, non-excluded tests
    P passed, F failed, S skipped

(plus ``, X excluded`` and ``, U not run`` -- tests the ``--total-timeout`` stopped -- when
there are any).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nkilib_causes  # noqa: E402
import nkilib_collect  # noqa: E402
import nkilib_precise  # noqa: E402
import nkilib_retry  # noqa: E402
import nkilib_sample  # noqa: E402


def choose(ids: list[str], unit: bool, every: int, offset: int) -> tuple[list[str], list[str]]:
    """(unit test ids, sampled integration test ids)."""
    units = [i for i in ids if i.startswith("unit/")] if unit else []
    integ = [i for i in ids if not i.startswith("unit/")]
    return units, nkilib_sample.sample(integ, every, offset)


def tally(per: dict, ids: list[str]) -> dict:
    """Outcomes of ``ids``: counts, the excluded categories and the simulator's causes."""
    counts: Counter = Counter()
    excluded: dict[str, list[dict]] = {}
    causes: dict[str, list[dict]] = {}
    for i in ids:
        r = per.get(i)
        kind = r["kind"] if r else "not run"
        if kind in ("failed", "error"):
            cat = nkilib_causes.classify(r)
            if cat is not None:
                excluded.setdefault(cat.name, []).append(r)
                kind = "excluded"
            else:
                causes.setdefault(nkilib_causes.cause(r, nkilib_sample.cause_key), []).append(r)
                kind = "failed"
        counts[kind] += 1
    return {"counts": counts, "excluded": excluded, "causes": causes}


def report(t: dict, top: int, slowest: list[str], retries: list[str] = ()) -> list[str]:
    c = t["counts"]
    out = []
    cats = {cat.name: cat for cat in nkilib_causes.EXCLUDED}
    out.append("test files not collected (defects of the nki-library snapshot itself):")
    for f, why in nkilib_collect.IGNORED.items():
        out.append(f"  {f}: {why}")
    out.append(f"excluded failures ({c['excluded']}): suite defects and AWS internals")
    for name, recs in sorted(t["excluded"].items(), key=lambda kv: -len(kv[1])):
        cat = cats[name]
        out.append(f"  {len(recs):4d}  [{cat.kind}] {name}: {cat.why}")
        out.append(f"        evidence: {nkilib_causes.evidence(recs[0])}")
    causes = sorted(((k, v) for k, v in t["causes"].items() if k not in nkilib_causes.UNFINISHED),
                    key=lambda kv: (-len(kv[1]), kv[0]))
    n_sim = sum(len(v) for _k, v in causes)
    out.append(f"failures of the simulator ({n_sim}, {len(causes)} distinct causes):")
    for key, recs in causes[:top]:
        if key.startswith(("timeout:", "memory:", "pytest-xdist")):
            out.append(f"  {len(recs):4d}  {key}")
        else:
            out.append(f"  {len(recs):4d}  {nkilib_causes.evidence(recs[0])}")
        out.append(f"        e.g. {recs[0]['nodeid'][:160]}")
    for key in nkilib_causes.UNFINISHED:
        recs = t["causes"].get(key, [])
        out.append(f"tests that did not finish in the suite's own code ({len(recs)}; counted "
                   f"as failures): {key.removeprefix('did not finish: ')}")
        for r in recs:
            out.append(f"  {r.get('duration', 0):6.0f}s {r.get('rss_gb', 0.0):5.1f} GiB  at "
                       f"{nkilib_causes.site(r)}  {r['nodeid'][:120]}")
    out.extend(retries)
    out.extend(slowest)
    denom = c["passed"] + c["failed"]
    ratio = 100.0 * c["passed"] / denom if denom else 0.0
    out.append(f"pass ratio: {c['passed']} / ({c['passed']} + {c['failed']}) = {ratio:.1f}% "
               f"of the collected, non-skipped, non-excluded tests")
    last = f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"
    if c["excluded"]:
        last += f", {c['excluded']} excluded"
    if c["not run"]:
        last += f", {c['not run']} not run"
    out.append(last)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", type=Path, default=nkilib_collect.DEFAULT_ROOT,
                    help="nki-library checkout")
    ap.add_argument("--every", type=int, default=0, help="run every N-th integration test")
    ap.add_argument("--target", type=int, default=150,
                    help="about this many integration tests (default 150; ignored with --every)")
    ap.add_argument("--offset", type=int, default=0, help="start the sample at this index mod N")
    ap.add_argument("--all", action="store_true", help="every collected integration test")
    ap.add_argument("--full", action="store_true", help="--all, and collect the "
                    "coverage_parametrize tests too (collection takes ~10 min)")
    ap.add_argument("--no-unit", action="store_true", help="leave out the unit tests")
    ap.add_argument("--ids-file", type=Path, help="cache of the collected ids (read if present)")
    ap.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers")
    nkilib_sample.add_limit_args(ap)
    nkilib_retry.add_args(ap)
    nkilib_precise.add_args(ap)
    ap.add_argument("--total-timeout", type=float, default=0,
                    help="seconds for the whole run (default: none)")
    ap.add_argument("--top", type=int, default=25, help="simulator causes to show")
    ap.add_argument("--slowest", type=int, default=20,
                    help="slowest tests by nki-mlir time to show (default 20)")
    ap.add_argument("--report-json", type=Path, help="write per-test outcomes here")
    ns = nkilib_collect.parse_suite_args(ap, argv)
    if ns is None:
        return 2
    t0 = time.perf_counter()
    ids = nkilib_sample.collect_ids(ns.root, ns.full, ns.ids_file)
    n_integ = sum(not i.startswith("unit/") for i in ids)
    every = 1 if (ns.all or ns.full) else ns.every or max(1, round(n_integ / ns.target))
    units, integ = choose(ids, not ns.no_unit, every, ns.offset)
    print(f"collected {len(ids)} test ids in {time.perf_counter() - t0:.0f}s; running "
          f"{len(units)} unit tests and every {every}th integration test (offset "
          f"{ns.offset % every}): {len(integ)} of {n_integ}")
    chosen = units + integ
    extra = ns.extra if ns.full else ["--skip-coverage-parametrize", *ns.extra]
    records, dt, timed_out = nkilib_sample.run_sample(
        ns.root, chosen, ns.workers, ns.test_timeout, ns.total_timeout or 10 ** 7, extra,
        harness_timeout=ns.harness_timeout, max_rss_gb=ns.max_rss_gb,
        test_timeout_wall=ns.test_timeout_wall, keep_outputs=ns.keep_outputs)
    per = nkilib_sample.summarise(records, chosen)["per"]
    print(f"run: {dt:.0f}s{' (stopped by --total-timeout)' if timed_out else ''}", flush=True)
    first_limit = nkilib_sample.default_max_rss(ns.workers) if ns.max_rss_gb is None \
        else ns.max_rss_gb
    per, retries = nkilib_retry.run_retries(ns, per, chosen, first_limit, extra)
    retries = retries + nkilib_precise.run_checks(ns, per, chosen, extra)
    slowest = nkilib_sample.slowest_table({i: per[i] for i in chosen if i in per}, ns.slowest)
    for name, part in (("unit", units), ("integration", integ)):
        if part:
            c = tally(per, part)["counts"]
            print(f"{name}: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped, "
                  f"{c['excluded']} excluded, {c['not run']} not run")
    t = tally(per, chosen)
    if ns.report_json:
        ns.report_json.write_text(json.dumps({"ids": chosen, "per": per}, indent=1))
    print("\n".join(report(t, ns.top, slowest, retries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
