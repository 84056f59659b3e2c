"""Compile time against kernel size: one unrolled kernel at growing instruction counts.

    python bench/compile_scaling.py [--sizes 256,1024,4096,16384,65536] [--profile 4096]

The kernel is a Python ``range`` loop whose index is used as a Python int (``i % 2`` picks
the scalar), so the tracing frontend must unroll it: every iteration adds four instructions
(``dma_copy`` load, ``activation``, ``tensor_scalar``, ``dma_copy`` store) on a fresh SBUF
tile.  For each size it prints (BLAS pinned to one thread, ``use_cache=False``):

- the instruction count of the compiled ``nisa`` IR, the compile wall time and process
  CPU time (s; CPU time is the steadier one on a shared machine) and the
  peak resident memory of the process (MiB, ``ru_maxrss``): every size is compiled in a
  fresh child process (after one tiny warm-up compile), so the peak is that size's own;
  ``--tracemalloc`` measures the peak traced Python memory instead, on a second run;
- the wall and CPU time of each phase (s; sorted by CPU time): frontend tracing
  (``build_module``), the output coverage check, IR printing, each pass of the pipeline,
  ``module.verify`` (every call, the frontend's included, so phases may overlap), the
  per-stage checks, the memory report, the compact IR encoding, artifact writing;
- the growth ratio of the compile time to the previous size, and ``time(4k)/time(256)``.

``--profile N`` also runs :mod:`cProfile` on one compile of size ``N`` and prints the top
functions by cumulative time.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from collections import defaultdict

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import nki_mlir as nki  # noqa: E402
import nki_mlir.isa as nisa  # noqa: E402
import nki_mlir.language as nl  # noqa: E402
from nki_mlir.driver import compile as compiler  # noqa: E402  (where compile_kernel looks names up)
from nki_mlir.driver import pipeline  # noqa: E402
from nki_mlir.runtime import artifact  # noqa: E402

#: instructions per loop iteration of :func:`unrolled`
PER_ITER = 4
#: free size (elements) of one tile
FREE = 4


@nki.jit
def unrolled(x):
    """``x``: (iterations * 128, FREE) float32; every iteration scales one 128-row tile."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.activation(dst=t, op=nl.exp, data=t)
        scale = 2.0 if i % 2 == 0 else 0.5
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


class PhaseTimer:
    """Wraps the compiler's phases to sum their wall and process CPU time (s) per phase name
    (a phase called from inside another one is counted in both)."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self._undo: list = []

    def wrap(self, owner, attr: str, label) -> None:
        orig = getattr(owner, attr)
        acc, cpu = self.seconds, self.cpu_seconds

        def timed(*a, **kw):
            name = label(a) if callable(label) else label
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return orig(*a, **kw)
            finally:
                acc[name] += time.perf_counter() - t0
                cpu[name] += time.process_time() - c0
        setattr(owner, attr, timed)
        self._undo.append((owner, attr, orig))

    def __enter__(self):
        from xdsl.dialects.builtin import ModuleOp
        from nki_mlir.passes.allocate import NisaAllocate
        from nki_mlir.passes.legalize import NkiLegalize
        from nki_mlir.passes.lower_nki_to_nisa import LowerNkiToNisa
        from nki_mlir.passes.schedule import NisaSchedule
        from nki_mlir.passes import memory_report, output_coverage
        from nki_mlir.runtime import ir_compact
        self.wrap(compiler, "build_module", "frontend (build_module)")
        self.wrap(output_coverage, "check_outputs", "output coverage check")
        self.wrap(compiler, "print_module", "print IR")
        self.wrap(pipeline, "check_stage", "stage checks")
        self.wrap(memory_report, "manifest_entry", "memory report")
        self.wrap(ir_compact, "encode", "compact IR encode")
        self.wrap(artifact, "write_artifact", "write artifact")
        self.wrap(ModuleOp, "verify", "verify")
        for cls in (NkiLegalize, LowerNkiToNisa, NisaAllocate, NisaSchedule):
            self.wrap(cls, "apply", f"pass {cls.name}")
        return self

    def __exit__(self, *exc):
        for owner, attr, orig in reversed(self._undo):
            setattr(owner, attr, orig)


def compile_once(iterations: int):
    """Compile for ``iterations`` loop iterations; ``(kernel, wall s, process CPU s)``."""
    x = np.zeros((iterations * 128, FREE), np.float32)
    t0, c0 = time.perf_counter(), time.process_time()
    ck = nki.compile(unrolled, x, use_cache=False)
    return ck, time.perf_counter() - t0, time.process_time() - c0


def count_instructions(ck) -> int:
    return sum(1 for line in ck.ir("nisa").splitlines() if "nkim.queue" in line)


def peak_mib(iterations: int) -> float:
    tracemalloc.start()
    compile_once(iterations)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2 ** 20


def profile(iterations: int, top: int = 30) -> None:
    import cProfile
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    compile_once(iterations)
    pr.disable()
    print(f"\n== cProfile, {iterations * PER_ITER} instructions (top {top} by cumulative time)")
    pstats.Stats(pr).sort_stats("cumulative").print_stats(top)


def measure(n: int, use_tracemalloc: bool) -> dict:
    """Compile the kernel of ``n`` instructions in this process; the numbers as a dict."""
    import resource
    compile_once(2)                      # warm imports and caches
    iters = max(1, n // PER_ITER)
    with PhaseTimer() as pt:
        ck, secs, cpu = compile_once(iters)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mem = peak_mib(iters) if use_tracemalloc else rss
    return {"size": n, "instructions": count_instructions(ck), "seconds": secs, "cpu_seconds": cpu,
            "peak_mib": mem, "phases": dict(pt.seconds), "phases_cpu": dict(pt.cpu_seconds)}


def main() -> None:
    import json
    import subprocess
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,1024,4096,16384,65536",
                    help="instruction counts (comma-separated)")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="peak = traced Python memory of a second run (slow) instead of ru_maxrss")
    ap.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--profile", type=int, default=0, help="cProfile one compile of this size")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.tracemalloc)))
        return
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", str(n)]
        cmd += ["--tracemalloc"] if args.tracemalloc else []
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        rows.append(r)
        secs, cpu = r["seconds"], r["cpu_seconds"]
        prev = rows[-2] if len(rows) > 1 else None
        ratio = f"{secs / prev['seconds']:6.2f}x (cpu {cpu / prev['cpu_seconds']:5.2f}x)" if prev else "     -"
        print(f"size {n:6d}: {r['instructions']:6d} instructions  compile {secs:8.2f} s "
              f"(cpu {cpu:8.2f} s)  peak {r['peak_mib']:8.1f} MiB  growth {ratio}", flush=True)
        pcpu = r["phases_cpu"]
        for name, t in sorted(r["phases"].items(), key=lambda kv: -pcpu[kv[0]]):
            print(f"    {name:28s} {t:8.3f} s  (cpu {pcpu[name]:8.3f} s, {100 * pcpu[name] / cpu:5.1f}%)",
                  flush=True)
    by = {r["size"]: r for r in rows}
    if 256 in by and 4096 in by:
        print(f"time(4k)/time(256) = {by[4096]['seconds'] / by[256]['seconds']:.2f} wall, "
              f"{by[4096]['cpu_seconds'] / by[256]['cpu_seconds']:.2f} cpu  (target <= 24)")
    if 65536 in by:
        print(f"time(64k) = {by[65536]['seconds']:.1f} s wall, {by[65536]['cpu_seconds']:.1f} s cpu  "
              f"(target <= 60 s)")
    if args.profile:
        profile(max(1, args.profile // PER_ITER))


if __name__ == "__main__":
    main()
