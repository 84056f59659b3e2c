"""Run fuzz cases in worker processes with a time limit per case.

A case is ``case_fn(seed) -> (kind, detail)`` with kind ``"ok"``, ``"located"`` (a user
error with file:line:col), ``"unlocated"``, ``"internal"`` or ``"invalid"`` (the mutant was
not a program worth counting, e.g. not valid Python).  A case that runs past the time limit
is a ``"hang"``: its worker is killed and replaced.  Workers are forked, so a hang inside one
C-level operation cannot stop the run.
"""
from __future__ import annotations

import multiprocessing as mp
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Callable

KINDS = ("ok", "located", "unlocated", "internal", "hang", "invalid")


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)
    findings: list[tuple[int, str, str]] = field(default_factory=list)   # (seed, kind, detail)

    def line(self) -> str:
        c = self.counts
        n = sum(c[k] for k in KINDS if k != "invalid")
        return (f"{n} cases: {c['located']} located errors, {c['internal']} internal, "
                f"{c['unlocated']} unlocated, {c['hang']} hangs ({c['ok']} compiled and ran, "
                f"{c['invalid']} mutants not valid Python/MLIR skipped)")


def _worker(case_fn: Callable[[int], tuple[str, str]], conn) -> None:
    while True:
        seed = conn.recv()
        if seed is None:
            return
        try:
            result = case_fn(seed)
        except BaseException as exc:   # the harness itself must keep going
            result = ("internal", f"harness: {type(exc).__name__}: {exc}")
        conn.send(result)


def run(case_fn: Callable[[int], tuple[str, str]], seeds: list[int], workers: int = 2,
        timeout: float = 60.0, progress: Callable[[Report, int], None] | None = None) -> Report:
    """Run every seed; returns the :class:`Report` (counts and the non-located findings)."""
    ctx = mp.get_context("fork")
    report = Report()
    todo = list(reversed(seeds))
    live: dict = {}   # parent conn -> [process, seed or None, deadline]

    def start():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_worker, args=(case_fn, child), daemon=True)
        p.start()
        child.close()
        live[parent] = [p, None, 0.0]
        return parent

    def feed(conn):
        if todo:
            seed = todo.pop()
            conn.send(seed)
            live[conn][1:] = [seed, time.monotonic() + timeout]
        else:
            conn.send(None)
            live[conn][0].join(5)
            del live[conn]

    for _ in range(min(workers, len(seeds))):
        feed(start())
    done = 0
    while live:
        now = time.monotonic()
        next_deadline = min(v[2] for v in live.values())
        ready = wait(list(live), timeout=max(0.0, next_deadline - now))
        for conn in ready:
            proc, seed, _ = live[conn]
            try:
                kind, detail = conn.recv()
            except (EOFError, OSError):
                kind, detail = "internal", "worker died (crash in native code?)"
                proc.join(1)
                del live[conn]
                report.counts[kind] += 1
                report.findings.append((seed, kind, detail))
                done += 1
                feed(start())
                continue
            report.counts[kind] += 1
            if kind in ("unlocated", "internal"):
                report.findings.append((seed, kind, detail))
            done += 1
            if progress:
                progress(report, done)
            feed(conn)
        now = time.monotonic()
        for conn, (proc, seed, deadline) in list(live.items()):
            if seed is not None and now > deadline and conn not in ready:
                proc.kill()
                proc.join(1)
                del live[conn]
                report.counts["hang"] += 1
                report.findings.append((seed, "hang", f"no result in {timeout:.0f} s"))
                done += 1
                feed(start())
    return report
