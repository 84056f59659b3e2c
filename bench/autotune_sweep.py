"""Autotune throughput: sweep a few hundred variants of a matmul on the cost model and
print variants/s, locally (process pool) and on Ray when it is installed.

    OPENBLAS_NUM_THREADS=1 python bench/autotune_sweep.py                 # 216 variants, pool + Ray
    OPENBLAS_NUM_THREADS=1 python bench/autotune_sweep.py --workers 1 --no-ray
    python bench/autotune_sweep.py --check      # also run each variant on the interpreter

The kernel (:func:`bench_matmul`, ours) computes ``out[M, N] = lhsT.T @ rhs`` (bf16 in,
fp32 out) with five compile-time knobs: the output tile ``TM x TN``, how many K tiles
one DMA brings (``KT``), the loop order over output tiles (``ORDER``) and the engine that
evacuates PSUM (``EVICT``): 3 * 3 * 4 * 2 * 3 = 216 variants.  Every sweep uses an empty
compile cache and no results cache, so each variant is compiled and estimated.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import nki_mlir as nki  # noqa: E402
import nki_mlir.isa as nisa  # noqa: E402
import nki_mlir.language as nl  # noqa: E402

SPACE = {"TM": [32, 64, 128], "TN": [128, 256, 512], "KT": [1, 2, 4, 8], "ORDER": ["mn", "nm"],
         "EVICT": ["vector", "scalar", "gpsimd"]}


@nki.jit
def bench_matmul(lhsT, rhs, TM=128, TN=512, KT=1, ORDER="mn", EVICT="vector"):
    """``out = lhsT.T @ rhs`` for lhsT [K, M], rhs [K, N] bf16 (K a multiple of 128 * KT,
    M of TM <= 128, N of TN <= 512); fp32 [M, N] out.  Each [TM, TN] output tile
    accumulates K/128 matmuls in one PSUM tile; ORDER "mn" walks M outer, "nm" N outer."""
    k_size, m_size = lhsT.shape
    _, n_size = rhs.shape
    engine = {"vector": nisa.vector_engine, "scalar": nisa.scalar_engine,
              "gpsimd": nisa.gpsimd_engine}[EVICT]
    out = nl.ndarray((m_size, n_size), dtype=nl.float32, buffer=nl.shared_hbm)
    outer, inner = (m_size // TM, n_size // TN) if ORDER == "mn" else (n_size // TN, m_size // TM)
    for o in nl.affine_range(outer):
        for i in nl.affine_range(inner):
            m, n = (o, i) if ORDER == "mn" else (i, o)
            ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for kb in nl.affine_range(k_size // (128 * KT)):
                a_blk = nl.ndarray((128, KT, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b_blk = nl.ndarray((128, KT, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                for kt in nl.affine_range(KT):
                    k0 = (kb * KT + kt) * 128
                    nisa.dma_copy(dst=a_blk[:, kt, :], src=lhsT[k0:k0 + 128, m * TM:(m + 1) * TM])
                    nisa.dma_copy(dst=b_blk[:, kt, :], src=rhs[k0:k0 + 128, n * TN:(n + 1) * TN])
                for kt in nl.affine_range(KT):
                    nisa.nc_matmul(dst=ps, stationary=a_blk[:, kt, :], moving=b_blk[:, kt, :])
            res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=ps, engine=engine)
            nisa.dma_copy(dst=out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)
    return out


def sweep(label: str, **kw):
    from nki_mlir.autotune import tune
    from nki_mlir.runtime import cache
    d = tempfile.mkdtemp(prefix="nki-tune-bench-")
    os.environ["NKI_MLIR_CACHE_DIR"] = d        # cold compile cache: every variant compiles
    cache.memory_clear()
    try:
        res = tune(bench_matmul, ARGS, SPACE, use_cache=False, **kw)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    n = len(res.rows)
    print(f"{label}: {n} variants in {res.seconds:.1f} s = {n / res.seconds:.2f} variants/s "
          f"({len(res.ok)} ok, {len(res.rejected)} rejected; {res.backend})")
    return res


def main() -> int:
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="512,256,1024", help="K,M,N (default 512,256,1024)")
    ap.add_argument("--workers", type=int, default=None, help="local processes (default: CPU count)")
    ap.add_argument("--check", action="store_true", help="run every variant on the interpreter too")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--top", type=int, default=5)
    ns = ap.parse_args()
    k, m, n = (int(x) for x in ns.shape.split(","))
    ARGS = [f"{k}x{m}xbf16", f"{k}x{n}xbf16"]
    print(f"bench_matmul [{k}, {m}] x [{k}, {n}], {os.cpu_count()} CPUs, check={ns.check}")
    res = sweep(f"local ({ns.workers or os.cpu_count()} workers)", workers=ns.workers,
                check=ns.check)
    print(res.table(ns.top))
    if not ns.no_ray:
        try:
            import ray
        except ImportError:
            print("ray: not installed (pip install 'nki-mlir[ray]'); skipped")
            return 0
        t0 = time.perf_counter()
        ray.init(include_dashboard=False, log_to_driver=False)
        print(f"ray.init: {time.perf_counter() - t0:.1f} s (not counted)")
        try:
            sweep("ray (local instance)", ray_address="local", check=ns.check)
        finally:
            ray.shutdown()
    return 0


ARGS: list = []

if __name__ == "__main__":
    sys.exit(main())
