"""What the in-memory compile cache keeps alive across calls of many kernels (a test suite).

    python bench/memory_cache.py [--calls 8] [--tiles 2000] [--budget N]

One kernel of our own is called ``--calls`` times, each time on a new shape, so every call
compiles (disk cache in a fresh temporary directory) and decodes a new program of about
``3 * --tiles`` instructions (a Python ``range`` loop appending tiles to a list: unrolled).
After every call it prints, per setting of ``NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS``:

- the instructions the cache's kernels keep decoded (the sum of their ``weight()``),
- the objects Python's cyclic garbage collector tracks (``len(gc.get_objects())``),
- the CPU time of one full collection (``gc.collect()``; ms, process CPU time), which every
  large kernel call pays once when it ends (:mod:`nki_mlir.runtime.gc_pause`).

The settings are ``--budget`` (default: the library's default bound, which keeps about 6
kernels of the default size) and an unbounded one (``10**12``: every kernel stays, up to
``NKI_MLIR_MEMORY_CACHE_ENTRIES``); each runs in its own child process.  The last
line is the ratio of the last call's collection time, unbounded over bounded.  BLAS is
pinned to one thread.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r'''
import gc, json, sys, time
import numpy as np
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import cache


@nki.jit
def scale_tiles(x):
    """out = 2 * x, one [128, F] tile at a time; the list keeps the loop unrolled."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = []
    for i in range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
        tiles.append(t)
    return out


calls, tiles = int(sys.argv[1]), int(sys.argv[2])
rows = []
for c in range(calls):
    x = np.ones((128 * (tiles + c), 64), np.float32)
    np.testing.assert_array_equal(scale_tiles(x), 2 * x)
    kept = sum(cache.weight(v) for v in cache._MEMORY.values())
    n = len(gc.get_objects())
    t = time.process_time()
    gc.collect()
    rows.append((kept, n, (time.process_time() - t) * 1e3))
print(json.dumps(rows))
'''


def run(calls: int, tiles: int, budget: str | None) -> list:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS", None)
    if budget is not None:
        env["NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS"] = budget
    with tempfile.TemporaryDirectory() as d:
        env["NKI_MLIR_CACHE_DIR"] = os.path.join(d, "cache")
        child = os.path.join(d, "child.py")        # (a kernel's source must be in a file)
        with open(child, "w") as f:
            f.write(CHILD)
        out = subprocess.run([sys.executable, child, str(calls), str(tiles)], env=env,
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--tiles", type=int, default=2000)
    ap.add_argument("--budget", type=int, default=None,
                    help="NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS of the bounded run (default: unset)")
    ns = ap.parse_args()
    results = {}
    bound = "default bound" if ns.budget is None else f"{ns.budget:,}"
    for label, budget in ((bound, None if ns.budget is None else str(ns.budget)),
                          ("unbounded", str(10 ** 12))):
        results[label] = rows = run(ns.calls, ns.tiles, budget)
        print(f"NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS: {label}")
        print(f"  {'call':>4} {'kept instructions':>18} {'tracked objects':>16} {'full collect':>13}")
        for i, (kept, n, ms) in enumerate(rows):
            print(f"  {i:>4} {kept:>18,} {n:>16,} {ms:>10.1f} ms")
    last_b, last_u = results[bound][-1], results["unbounded"][-1]
    print(f"last call: tracked objects unbounded / bounded = {last_u[1] / last_b[1]:.2f}x, "
          f"full collection = {last_u[2] / max(last_b[2], 1e-6):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
