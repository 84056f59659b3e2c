"""How fast the toolchain is (issue 20): every row as a ratio or a time from one run.

    OPENBLAS_NUM_THREADS=1 python bench/toolchain.py [--repeat N] [--only ROWS]

Rows (the baseline of each ratio is measured in the same run, interleaved with it):

- ``import``: ``import nki_mlir`` in a fresh interpreter beyond ``import numpy`` (ms);
- ``warm call``: a warm call of a trivial kernel (one-tile add, 128x8 fp32: two DMAs in,
  one ``tensor_tensor``, one DMA out) beyond the same NumPy work (``a + b``), in us, and
  the same for ``tensor_add`` 128x512 (its 256 KiB tiles make it mostly interpreter work);
  each split into the driver (the call beyond ``Program.run_checked`` on the same arrays:
  what the warm call runs after its plan's checks) and the interpreter (``run_checked``
  beyond ``a + b``);
- ``decode``: a disk-cache hit of each main-job kernel (examples/run_examples.py): the
  artifact read, checked and decoded into an interpreter program (ms), and the decode
  straight from the in-memory module after a compile;
- ``interp``: interpreter time / NumPy time on the same math (matmul 512^3 bf16 -> fp32,
  layernorm 256x512, softmax 4096x1024, attention S=512 d=128, all fp32 NumPy);
- ``hazards``: hazard-checking mode (``hazards=True``, engine queues) / normal mode
  (program order) on the same four kernels;
- ``estimate``: the cost model's dynamic instructions per second (an uncached
  ``estimate()``: one timed run over the engine queues) on the same four kernels and on
  matmul 2048^3 bf16 (4,608 instructions, where the per-run fixed cost matters less).

Each time is the best of ``--repeat`` runs (default 5), in CPU time of this process
(``--wall``: wall time; the import row is always wall time of a child process), so load on
the machine inflates the absolute times more than the ratios.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, ROOT)

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

#: in-process times are CPU time of this process (BLAS runs on this thread), which other
#: processes on a loaded machine inflate far less than wall time; --wall to use wall time
CLOCK = time.process_time
GOALS = {"import": 60.0, "warm call": 20.0, "decode": 5.0, "interp": 1.5, "hazards": 2.0,
         "estimate": 1e6}


def best(fn, repeat: int) -> float:
    """The smallest wall time of ``repeat`` calls of ``fn`` (seconds)."""
    out = float("inf")
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        out = min(out, CLOCK() - t0)
    return out


def paired(*fns, repeat: int) -> tuple[float, ...]:
    """Best times of each of ``fns``, measured interleaved (so all see the same load)."""
    ts = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, f in enumerate(fns):
            ts[i] = min(ts[i], best(f, 1))
    return tuple(ts)


def row(name: str, value: str, goal: str, ok: bool | None) -> None:
    mark = "" if ok is None else ("ok" if ok else "ABOVE GOAL")
    print(f"  {name:<46}{value:>30}   goal {goal:<10}{mark}")


# ----------------------------------------------------------------------------- cases


def cases(rng):
    """(name, kernel, args, numpy function of the same math) of the four measured kernels."""
    from kernels import attention, layernorm, row_softmax, tiled_matmul
    a_t = rng.standard_normal((512, 512)).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((512, 512)).astype(np.float32).astype(ml_dtypes.bfloat16)
    x = (3 * rng.standard_normal((256, 512)) + 1).astype(np.float32)
    gamma = rng.standard_normal((1, 512)).astype(np.float32)
    beta = rng.standard_normal((1, 512)).astype(np.float32)
    s = rng.standard_normal((4096, 1024)).astype(np.float32)
    q, k, v = (rng.standard_normal((512, 128)).astype(np.float32) for _ in range(3))

    def np_matmul():
        return a_t.astype(np.float32).T @ b.astype(np.float32)

    def np_layernorm():
        mean = x.sum(axis=1, keepdims=True) * np.float32(1 / 512)
        xc = x - mean
        var = (xc * xc).sum(axis=1, keepdims=True) * np.float32(1 / 512) + np.float32(1e-5)
        return xc * (1 / np.sqrt(var)) * gamma + beta

    def np_softmax(t=None):
        t = s if t is None else t
        e = np.exp(t - t.max(axis=1, keepdims=True))
        return e * (1 / e.sum(axis=1, keepdims=True))

    def np_attention():
        return np_softmax((q @ k.T) * np.float32(1 / np.sqrt(128))) @ v

    return [("matmul 512^3 bf16", tiled_matmul, (a_t, b), np_matmul),
            ("layernorm 256x512", layernorm, (x, gamma, beta), np_layernorm),
            ("softmax 4096x1024", row_softmax, (s,), np_softmax),
            ("attention S=512 d=128", attention, (q, k, v), np_attention)]


# ----------------------------------------------------------------------------- rows


def bench_import(repeat: int) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run(code):
        return lambda: subprocess.run([sys.executable, "-c", code], env=env, check=True)
    global CLOCK
    clock, CLOCK = CLOCK, time.perf_counter    # a child process: wall time
    t_np, t_nki = paired(run("import numpy"), run("import numpy, nki_mlir"), repeat=repeat)
    CLOCK = clock
    ms = (t_nki - t_np) * 1e3
    row("import nki_mlir beyond import numpy", f"{ms:.0f} ms", "<= 60 ms", ms <= GOALS["import"])


def small_add(a, b):
    """out = a + b for one [128, F] tile: the trivial kernel of the warm-call row."""
    import nki_mlir.isa as nisa
    import nki_mlir.language as nl
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    tc = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.add)
    nisa.dma_copy(dst=out, src=tc)
    return out


def bench_warm_call(repeat: int) -> None:
    """A warm call beyond ``a + b``, and its parts: the driver (the call beyond
    ``Program.run_checked`` on the same arrays) and the interpreter (``run_checked`` beyond
    ``a + b``)."""
    import nki_mlir as nki
    from kernels import tensor_add
    rng = np.random.default_rng(1)
    n = 200

    def many(fn):       # each result dropped before the next call, as in a loop of calls
        def run():
            for _ in range(n):
                fn()
        return run
    for name, kernel, shape in (("add 128x8", nki.jit(small_add), (128, 8)),
                                ("tensor_add 128x512", tensor_add, (128, 512))):
        a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        kernel(a, b)                       # compile (cached) and warm up
        kernel(a, b)
        prog = kernel.compile(a, b).program
        calls = many(lambda: kernel(a, b))
        # what the warm call runs: Program.run on arguments the plan checked once
        runs = many(lambda: prog.run_checked([a, b], None, "program-order", False))
        t_k, t_run, t_np = paired(calls, runs, many(lambda: a + b), repeat=max(repeat, 7))
        us = (t_k - t_np) / n * 1e6
        row(f"warm call ({name}) beyond NumPy", f"{us:.1f} us", "<= 20 us",
            us <= GOALS["warm call"])
        row("  of which driver | run_checked beyond NumPy",
            f"{(t_k - t_run) / n * 1e6:.1f} | {(t_run - t_np) / n * 1e6:.1f} us", "", None)


def bench_decode(repeat: int) -> None:
    import nki_mlir as nki
    from nki_mlir import compiler
    from run_examples import main_cases
    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get("NKI_MLIR_CACHE_DIR")
        os.environ["NKI_MLIR_CACHE_DIR"] = tmp
        try:
            for name, kernel, args, _, _ in main_cases():
                ck = nki.compile(kernel, *args)
                dest, target = ck.artifact, ck.target
                t_disk = best(lambda: compiler._disk_hit(dest, target).program, repeat)
                fresh = [nki.compile(kernel, *args, use_cache=False) for _ in range(repeat)]
                it = iter(fresh)
                t_mem = best(lambda: next(it).program, repeat)
                ms = t_disk * 1e3
                row(f"decode {name[:22]} (disk | in-memory)",
                    f"{ms:.1f} | {t_mem * 1e3:.1f} ms", "<= 5 ms", ms <= GOALS["decode"])
        finally:
            if old is None:
                del os.environ["NKI_MLIR_CACHE_DIR"]
            else:
                os.environ["NKI_MLIR_CACHE_DIR"] = old


def bench_runtime(repeat: int, only: set[str]) -> None:
    import nki_mlir as nki
    from nki_mlir.perf.targets import target_model
    rng = np.random.default_rng(0)
    total_inst = total_s = 0.0
    for name, kernel, args, ref in cases(rng):
        ck = nki.compile(kernel, *args, use_cache=False)
        prog = ck.program
        run = lambda: prog.run(list(args))   # noqa: E731
        run()
        if "interp" in only:
            t_i, t_np = paired(run, ref, repeat=repeat)
            r = t_i / t_np
            row(f"interp / NumPy: {name}", f"{r:.2f}x ({t_i * 1e3:.1f}/{t_np * 1e3:.1f} ms)",
                "<= 1.5x", r <= GOALS["interp"])
        if "hazards" in only:
            hz = lambda: prog.run(list(args), hazards=True)   # noqa: E731
            hz()
            t_h, t_n = paired(hz, run, repeat=repeat)
            r = t_h / t_n
            row(f"hazards / normal: {name}", f"{r:.2f}x ({t_h * 1e3:.0f}/{t_n * 1e3:.0f} ms)",
                "<= 2x", r <= GOALS["hazards"])
        if "estimate" in only:
            n, t_e = bench_estimate(name, prog, target_model(ck.target), repeat)
            total_inst += n
            total_s += t_e
    if "estimate" in only:
        from kernels import tiled_matmul
        a = rng.standard_normal((2048, 2048)).astype(np.float32).astype(ml_dtypes.bfloat16)
        prog = nki.compile(tiled_matmul, a, a, use_cache=False).program
        n, t_e = bench_estimate("matmul 2048^3 bf16", prog, target_model("trn2"), repeat)
        total_inst += n
        total_s += t_e
    if "estimate" in only and total_s:
        rate = total_inst / total_s
        row("estimate(): all five", f"{rate / 1e3:.0f}k inst/s", ">= 1M/s",
            rate >= GOALS["estimate"])


def bench_estimate(name: str, prog, model, repeat: int) -> tuple[int, float]:
    """One estimate row: the rate of the best of ``repeat`` uncached timed runs of a freshly
    decoded ``prog`` (and, in brackets, of its first run: cost rows resolved, walk interpreted
    or generated); returns ``(instructions, best seconds)``."""
    from nki_mlir.perf.walk import timed_run
    t0 = CLOCK()
    est = timed_run(prog, model, keep_slices=False)
    cold = CLOCK() - t0
    t_e = best(lambda: timed_run(prog, model, keep_slices=False), max(repeat, 3))
    rate = est.instructions / t_e
    row(f"estimate(): {name}", f"{rate / 1e3:.0f}k inst/s (first {est.instructions / cold / 1e3:.0f}k) "
        f"{est.instructions}", ">= 1M/s", rate >= GOALS["estimate"])
    return est.instructions, t_e


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="import,warm,decode,interp,hazards,estimate",
                    help="comma-separated rows: import, warm, decode, interp, hazards, estimate")
    ap.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    ns = ap.parse_args()
    if ns.wall:
        global CLOCK
        CLOCK = time.perf_counter
    only = set(ns.only.split(","))
    import nki_mlir
    print(f"nki-mlir {nki_mlir.__version__} ({os.path.dirname(nki_mlir.__file__)}), NumPy "
          f"{np.__version__}, BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if "import" in only:
        bench_import(ns.repeat)
    if "warm" in only:
        bench_warm_call(ns.repeat)
    if "decode" in only:
        bench_decode(ns.repeat)
    if only & {"interp", "hazards", "estimate"}:
        bench_runtime(ns.repeat, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
