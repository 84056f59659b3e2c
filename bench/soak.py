#!/usr/bin/env python3
"""Soak bench: one process compiles and runs many distinct small kernels, then reports
what it left behind and how its memory grew.

    python bench/soak.py                 # 2,000 kernels; RSS growth measured from kernel 500
    python bench/soak.py -n 400 --from 100

Kernels vary in shape (partition and free size), compile-time constants and dtype; every
7th is compiled uncached (``use_cache=False``) and every 11th fails on purpose with a user
error (a tile of more than 128 partitions), which must be a located ``NKIError``.  Every
result is checked against NumPy.  The temporary folder is a fresh directory (``TMPDIR``)
and the compile cache another one, so "new entries in the temp folder" counts exactly what
the compiler left behind.  Prints one line per phase and a summary:
``N kernels (F failed on purpose): temp folder +E entries; RSS kernel A -> B: +X MiB``.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time


def rss_bytes() -> int:
    """Resident set size of this process in bytes (Linux /proc; else peak RSS)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _kernels():
    import nki_mlir as nki
    import nki_mlir.isa as nisa
    import nki_mlir.language as nl

    @nki.jit
    def soak_scale_add(a, scale, bias):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale, op1=nl.add, operand1=bias)
        nisa.dma_copy(dst=out, src=t)
        return out

    return soak_scale_add


def soak(n: int, measure_from: int, verbose: bool = True) -> dict:
    """Run ``n`` kernels; returns ``{"kernels", "failed", "temp_entries", "rss_from",
    "rss_to", "growth_bytes"}`` (RSS in bytes at kernel ``measure_from`` and at the end)."""
    import numpy as np

    import nki_mlir as nki
    from nki_mlir.errors import NKIError
    kernel = _kernels()
    tmp = tempfile.gettempdir()
    before = set(os.listdir(tmp))
    rng = np.random.default_rng(0)
    failed = 0
    rss_from = None
    t0 = time.perf_counter()
    for i in range(n):
        if i == measure_from:
            gc.collect()
            rss_from = rss_bytes()
        parts = 128 if i % 11 else 256           # 256 partitions: a user error on purpose
        free = 16 * (1 + i % 16)
        dt = (np.float32, np.float16)[i % 2]
        scale, bias = 1.0 + (i % 97) / 8, float(i // 97)
        x = rng.standard_normal((parts, free)).astype(dt)
        try:
            ck = nki.compile(kernel, x, scale, bias, use_cache=bool(i % 7))
            out = ck(x, scale, bias)
        except NKIError as exc:
            if parts == 128 or ":" not in str(exc):
                raise
            failed += 1
            continue
        want = (x.astype(np.float32) * np.float32(scale) + np.float32(bias)).astype(dt)
        np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
        if verbose and (i + 1) % 250 == 0:
            print(f"  {i + 1} kernels, {time.perf_counter() - t0:.0f} s, RSS {rss_bytes() / 2**20:.0f} MiB",
                  flush=True)
    gc.collect()
    rss_to = rss_bytes()
    new = sorted(set(os.listdir(tmp)) - before)
    return {"kernels": n, "failed": failed, "temp_entries": new, "rss_from": rss_from or rss_to,
            "rss_to": rss_to, "growth_bytes": rss_to - (rss_from or rss_to)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=2000, help="kernels to compile and run (default 2000)")
    ap.add_argument("--from", dest="start", type=int, default=500,
                    help="kernel at which RSS growth starts to count (default 500)")
    ns = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="nki-soak-tmp-")
    os.environ["TMPDIR"] = tmp
    tempfile.tempdir = tmp
    os.environ["NKI_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="nki-soak-cache-")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    r = soak(ns.n, ns.start)
    print(f"{r['kernels']} kernels ({r['failed']} failed on purpose): temp folder "
          f"+{len(r['temp_entries'])} entries{' ' + str(r['temp_entries'][:5]) if r['temp_entries'] else ''}; "
          f"RSS kernel {ns.start} -> {ns.n}: {r['rss_from'] / 2**20:.0f} -> {r['rss_to'] / 2**20:.0f} MiB "
          f"(+{r['growth_bytes'] / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
