"""Tracing frontend benchmarks: loops that stay rolled compile in time independent of
their trip count; loops Python needs unrolled are unrolled and correct; cold compile of the
main job's kernels against the AST frontend of the last commit before the tracer.

    python bench/trace_loops.py [--base COMMIT]

Prints, from one run (BLAS pinned to one thread):
1. compile time of an elementwise kernel over 8 and 64 tiles, for an ``nl.affine_range``
   loop and for a plain ``range`` loop, and the 64/8 ratio (rolled: close to 1);
2. a kernel whose loop appends tiles to a list: its result checked against NumPy, and the
   loop report naming that loop as unrolled, with the reason;
3. cold compile (``use_cache=False``, best of 3) of the README main-job kernels with this
   checkout and with ``--base`` (default: the parent of the tracer commit), and the ratio.
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

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import nki_mlir as nki  # noqa: E402
import nki_mlir.isa as nisa  # noqa: E402
import nki_mlir.language as nl  # noqa: E402
from nki_mlir.frontend.loops import explain  # noqa: E402
from nki_mlir.frontend.trace_build import last_loop_report  # noqa: E402

BASE_COMMIT = "9249a3a"  # the last commit before the tracing frontend


@nki.jit
def scale_affine(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def scale_range(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def gather_tiles(x):
    """Loads every tile into a list first, then writes them back in reverse order."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    n = x.shape[0] // 128
    tiles = []
    for i in nl.affine_range(n):
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        tiles.append(t)
    for j, t in enumerate(reversed(tiles)):
        nisa.dma_copy(dst=out[j * 128:(j + 1) * 128, :], src=t)
    return out


def _compile_ms(kernel, x, reps: int = 3) -> tuple[float, str]:
    best, ir = float("inf"), ""
    for _ in range(reps):
        t0 = time.perf_counter()
        ck = nki.compile(kernel, x, use_cache=False)
        best = min(best, time.perf_counter() - t0)
        ir = ck.ir("nki")
    return best * 1e3, ir


def rolled_loops() -> None:
    print("1. rolled loops: compile time against trip count (best of 3, use_cache=False)")
    nki.compile(scale_affine, np.zeros((256, 512), np.float32), use_cache=False)  # warm-up
    print(f"   {'kernel':<16}{'8 tiles ms':>12}{'64 tiles ms':>13}{'64/8':>7}  IR")
    for kernel in (scale_affine, scale_range):
        t8, ir8 = _compile_ms(kernel, np.zeros((8 * 128, 512), np.float32))
        t64, ir64 = _compile_ms(kernel, np.zeros((64 * 128, 512), np.float32))
        shape = "rolled" if ir64.count("scf.for") == 1 else "UNROLLED"
        print(f"   {kernel.fn.__name__:<16}{t8:>12.1f}{t64:>13.1f}{t64 / t8:>7.2f}  "
              f"{shape}, {ir64.count('nki.dma_copy(')} dma_copy ops in the nki IR")


def unrolled_list() -> None:
    print("2. a loop that appends tiles to a list")
    x = np.random.default_rng(0).standard_normal((4 * 128, 256)).astype(np.float32)
    y = nki.simulate(gather_tiles)(x)
    want = np.concatenate([x[i * 128:(i + 1) * 128] for i in reversed(range(4))])
    print(f"   result matches NumPy: {bool(np.array_equal(y, want))}")
    report = {k: v for k, v in last_loop_report().items()}
    for line in explain(report).splitlines():
        print("   " + os.path.relpath(line, ROOT) if line.startswith(ROOT) else "   " + line)


_MAIN_JOB = r"""
import sys, time, os
sys.path.insert(0, {root!r}); sys.path.insert(1, {examples!r})
import numpy as np, ml_dtypes
import nki_mlir as nki
from kernels import attention, layernorm, row_softmax, tensor_add, tiled_matmul
rng = np.random.default_rng(0)
bf = ml_dtypes.bfloat16
cases = [(tiled_matmul, (rng.standard_normal((512, 512)).astype(bf), rng.standard_normal((512, 512)).astype(bf))),
         (row_softmax, (rng.standard_normal((256, 512)).astype(np.float32),)),
         (tensor_add, (rng.standard_normal((256, 1024)).astype(np.float32),) * 2),
         (layernorm, (rng.standard_normal((256, 1024)).astype(np.float32),
                      rng.standard_normal((1, 1024)).astype(np.float32),
                      rng.standard_normal((1, 1024)).astype(np.float32))),
         (attention, tuple(rng.standard_normal((512, 128)).astype(np.float32) for _ in range(3)))]
for k, a in cases:
    nki.compile(k, *a, use_cache=False)  # warm-up: imports, first-use caches
best = float("inf")
for _ in range(3):
    t0 = time.perf_counter()
    for k, a in cases:
        nki.compile(k, *a, use_cache=False)
    best = min(best, time.perf_counter() - t0)
print(best * 1e3)
"""


def main_job(base: str) -> None:
    print(f"3. cold compile of the main job's 5 kernels (best of 3), tracer vs AST frontend at {base}")
    examples = os.path.join(ROOT, "examples")
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "base")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", wt, base], check=True)
        try:
            times = {}
            for label, root in (("tracer (this checkout)", ROOT), (f"AST front ({base})", wt)):
                env = dict(os.environ, NKI_MLIR_CACHE_DIR=os.path.join(tmp, "cache-" + label[:3]))
                out = subprocess.run([sys.executable, "-c", _MAIN_JOB.format(root=root, examples=examples)],
                                     capture_output=True, text=True, env=env, check=True)
                times[label] = float(out.stdout.strip().splitlines()[-1])
                print(f"   {label:<28}{times[label]:>10.1f} ms")
            new, old = times.values()
            print(f"   ratio tracer / AST front: {new / old:.2f}")
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", wt], check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default=BASE_COMMIT, help="commit of the AST frontend to compare with")
    args = ap.parse_args()
    rolled_loops()
    unrolled_list()
    main_job(args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
