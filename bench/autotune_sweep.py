"""Autotune a 2048x2048x2048 bf16 tiled matmul on the cost model: 216 variants (block sizes,
loop order, buffer depth), ranked locally on a process pool and again on a local Ray
instance; the two rankings are compared.

    OPENBLAS_NUM_THREADS=1 python bench/autotune_sweep.py            # pool, then Ray, compare
    OPENBLAS_NUM_THREADS=1 python bench/autotune_sweep.py --no-ray   # the local sweep only
    python bench/autotune_sweep.py --shape 1024,1024,1024 --no-check --top 0

The kernel (:func:`sweep_matmul`, ours) computes ``out[M, N] = lhsT.T @ rhs`` (bf16 in,
fp32 PSUM accumulation, bf16 out) with six compile-time knobs:

- block sizes: ``TN`` (moving free size of one matmul, 256 or 512), ``BM`` / ``BN`` (output
  tiles per block: the block is ``128*BM`` rows by ``TN*BN`` columns, ``BM*BN`` PSUM tiles);
- ``KT``: K tiles (of 128 rows) per buffer slot, brought by one DMA (a ``[128, KT, width]``
  access pattern over the HBM operand): fewer, larger DMAs against a coarser refill;
- ``BUFS``: buffer depth of the streamed operand -- a ring of ``BUFS`` slots in SBUF, slot
  ``s`` refilled once the matmuls that read its previous contents are done, so up to
  ``BUFS - 1`` slots load while one is multiplied (1: load, multiply, load, ...);
- ``ORDER``: loop order over output blocks.  ``"mn"``: M blocks outer; the lhsT stripe of the
  M block (all of K) is loaded once per M block and rhs is streamed through the ring.
  ``"nm"``: N blocks outer; the rhs stripe is held and lhsT streamed.

2 * 3 * 2 * 3 * 3 * 2 = 216 variants; at K=2048 all of them are valid.  By default each
variant is also run on the ISA interpreter (hazard checks on) and its output compared with
the first variant's.  Every sweep starts from an empty compile cache and no results cache,
so each variant is compiled, estimated and run.  The bench prints the ranked table of the
local sweep and of the Ray sweep, and whether the two rankings (variant order, status and
estimated latency of every row) are identical; the exit status is 1 if they are not (or if
the Ray sweep could not run without ``--no-ray``).
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

SPACE = {"TN": [256, 512], "BM": [1, 2, 4], "BN": [1, 2], "KT": [1, 2, 4], "BUFS": [1, 2, 4],
         "ORDER": ["mn", "nm"]}


def _k_tiles(src, row0, col0, kt, width):
    """The [128, kt, width] view of HBM ``src`` [R, C]: element ``(p, t, j)`` is
    ``src[row0 + t * 128 + p, col0 + j]`` -- kt K tiles side by side, one DMA."""
    cols = src.shape[1]
    return src.ap([[cols, 128], [128 * cols, kt], [1, width]], offset=row0 * cols + col0)


@nki.jit
def sweep_matmul(lhsT, rhs, TN=512, BM=2, BN=1, KT=1, BUFS=2, ORDER="mn"):
    """``out = lhsT.T @ rhs`` for lhsT [K, M], rhs [K, N] bf16; [M, N] bf16 out.

    K must be a multiple of 128 * KT * BUFS, M of 128 * BM, N of TN * BN; BM * BN PSUM
    tiles of [128, TN] fp32 must fit PSUM (8 banks of 2 KiB per partition).  The loops that
    reuse the SBUF stripe and ring are ``sequential_range`` (each iteration overwrites
    them), so the buffer depth is exactly ``BUFS``: the compiler adds no rotating copies.
    """
    k_size, m_size = lhsT.shape
    _, n_size = rhs.shape
    bm, bn = 128 * BM, TN * BN
    k_tiles = k_size // 128
    out = nl.ndarray((m_size, n_size), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    if ORDER == "mn":
        held, streamed, w_held, w_str = lhsT, rhs, bm, bn
        n_outer, n_inner = m_size // bm, n_size // bn
    else:
        held, streamed, w_held, w_str = rhs, lhsT, bn, bm
        n_outer, n_inner = n_size // bn, m_size // bm
    stripe = nl.ndarray((128, k_tiles, w_held), dtype=held.dtype, buffer=nl.sbuf)
    ring = nl.ndarray((128, BUFS, KT, w_str), dtype=streamed.dtype, buffer=nl.sbuf)
    for o in nl.sequential_range(n_outer):
        for kb in nl.affine_range(k_tiles // KT):
            nisa.dma_copy(dst=stripe[:, kb * KT:(kb + 1) * KT, :],
                          src=_k_tiles(held, kb * KT * 128, o * w_held, KT, w_held))
        for i in nl.sequential_range(n_inner):
            mb, nb = (o, i) if ORDER == "mn" else (i, o)
            ps = [[nl.ndarray((128, TN), dtype=nl.float32, buffer=nl.psum) for _ in range(BN)]
                  for _ in range(BM)]
            for kr in nl.sequential_range(k_tiles // (KT * BUFS)):
                for s in nl.static_range(BUFS):
                    k0 = (kr * BUFS + s) * KT * 128
                    nisa.dma_copy(dst=ring[:, s, :, :],
                                  src=_k_tiles(streamed, k0, i * w_str, KT, w_str))
                    for kt in nl.static_range(KT):
                        k = (kr * BUFS + s) * KT + kt
                        for x in nl.static_range(BM):
                            for y in nl.static_range(BN):
                                if ORDER == "mn":
                                    st = stripe[:, k, x * 128:(x + 1) * 128]
                                    mv = ring[:, s, kt, y * TN:(y + 1) * TN]
                                else:
                                    st = ring[:, s, kt, x * 128:(x + 1) * 128]
                                    mv = stripe[:, k, y * TN:(y + 1) * TN]
                                nisa.nc_matmul(dst=ps[x][y], stationary=st, moving=mv)
            for x in nl.static_range(BM):
                res = nl.ndarray((128, bn), dtype=nl.bfloat16, buffer=nl.sbuf)
                for y in nl.static_range(BN):
                    nisa.tensor_copy(dst=res[:, y * TN:(y + 1) * TN], src=ps[x][y])
                m0 = mb * bm + x * 128
                nisa.dma_copy(dst=out[m0:m0 + 128, nb * bn:(nb + 1) * bn], src=res)
    return out


def sweep(label: str, args: list, check: bool, **kw):
    """One sweep from a cold compile cache (the caller sets NKI_MLIR_CACHE_DIR)."""
    from nki_mlir.autotune import tune
    from nki_mlir.runtime import cache
    cache.memory_clear()
    t0 = time.process_time()
    res = tune(sweep_matmul, args, SPACE, use_cache=False, check=check, **kw)
    n = len(res.rows)
    print(f"{label}: {n} variants in {res.seconds:.1f} s = {n / res.seconds:.2f} variants/s "
          f"({len(res.ok)} ok, {len(res.rejected)} rejected; {res.backend}; driver CPU "
          f"{time.process_time() - t0:.1f} s)", flush=True)
    return res


def ranking(res) -> list[tuple]:
    """What must agree between two sweeps: per rank, the variant, its status, its latency."""
    return [(tuple(sorted(r.params.items())), r.status, r.latency_ns) for r in res.rows]


def compare(a, b) -> tuple[bool, str]:
    ra, rb = ranking(a), ranking(b)
    if ra == rb:
        return True, f"rankings identical: yes ({len(ra)} rows, same order, status and latency)"
    if len(ra) != len(rb):
        return False, f"rankings identical: NO ({len(ra)} rows against {len(rb)})"
    i = next(j for j, (x, y) in enumerate(zip(ra, rb)) if x != y)
    return False, f"rankings identical: NO, first difference at rank {i + 1}: {ra[i]} vs {rb[i]}"


def _cold_cache(prefix: str) -> str:
    d = tempfile.mkdtemp(prefix=prefix)
    os.environ["NKI_MLIR_CACHE_DIR"] = d
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="2048,2048,2048", help="K,M,N (default 2048,2048,2048)")
    ap.add_argument("--workers", type=int, default=None, help="local processes (default: CPU count)")
    ap.add_argument("--no-check", action="store_true", help="compile and estimate only")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray sweep and the comparison")
    ap.add_argument("--top", type=int, default=20, help="rows of the ranked table (0: all)")
    ns = ap.parse_args()
    k, m, n = (int(x) for x in ns.shape.split(","))
    args = [f"{k}x{m}xbf16", f"{k}x{n}xbf16"]
    check = not ns.no_check
    size = 1
    for v in SPACE.values():
        size *= len(v)
    print(f"sweep_matmul lhsT [{k}, {m}] x rhs [{k}, {n}] bf16: {size} variants of "
          f"{', '.join(SPACE)}; {os.cpu_count()} CPUs; check={check}", flush=True)
    d = _cold_cache("nki-tune-bench-")
    try:
        local = sweep(f"local ({ns.workers or os.cpu_count()} workers)", args, check,
                      workers=ns.workers)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(local.table(ns.top or None), flush=True)
    if ns.no_ray:
        return 0
    try:
        import ray
    except ImportError:
        print("ray: not installed (pip install 'nki-mlir[ray]'): rankings not compared")
        return 1
    d = _cold_cache("nki-tune-bench-ray-")      # before ray.init: the workers inherit it
    try:
        t0 = time.perf_counter()
        ray.init(include_dashboard=False, log_to_driver=False)
        print(f"ray.init: {time.perf_counter() - t0:.1f} s (not counted)", flush=True)
        try:
            remote = sweep("ray (local instance)", args, check, ray_address="local")
        finally:
            ray.shutdown()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(remote.table(ns.top or None), flush=True)
    same, text = compare(local, remote)
    print(text)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
