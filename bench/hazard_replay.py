"""In-process A/B of the hazard checks' bookkeeping (issue 20, the ``hazards`` row).

    OPENBLAS_NUM_THREADS=1 python bench/hazard_replay.py --base OTHER_WORKTREE [--repeat N]

On a loaded machine two processes timed one after the other see different loads; this
times two versions of ``nki_mlir/runtime/hazards.py`` in one process, interleaved.  For each
kernel of the ``hazards`` row (``bench/toolchain.py``: matmul 512^3 bf16, layernorm 256x512,
softmax 4096x1024, attention S=512 d=128) it records the :class:`~nki_mlir.runtime.hazards.Checker`
calls of one hazard-checked run (``on_alloc`` and ``check``, in order, with their instances
and environment snapshots), then replays them on a fresh checker of this tree and of the
``hazards.py`` of ``--base`` (loaded as a sibling module, so it imports this tree's
``hazard_*`` / ``footprint`` modules: only ``hazards.py`` is compared).  A replay on a fresh
checker repeats what a run's checks do (a new run stamp; the roots' marks kept with the
state, as across runs); ``forward`` is not replayed.

Prints per kernel the calls per run and the best CPU time per replayed run (us) of each
version, and their ratio (this tree / base); the same code measures within about 8% under
load ~10.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402


def _recorded(prog, args, H):
    """``(state, queue run, calls)`` of one hazard-checked run of ``prog``."""
    calls, cap = [], {}
    init, check, on_alloc = H.Checker.__init__, H.Checker.check, H.Checker.on_alloc

    def rec_init(self, state, qr):
        cap["run"] = (state, qr)
        init(self, state, qr)

    def rec_check(self, inst, env):
        calls.append((True, (inst, env)))
        check(self, inst, env)

    def rec_alloc(self, *a):
        calls.append((False, a))
        on_alloc(self, *a)
    H.Checker.__init__, H.Checker.check, H.Checker.on_alloc = rec_init, rec_check, rec_alloc
    try:
        prog.run(list(args), hazards=True)
    finally:
        H.Checker.__init__, H.Checker.check, H.Checker.on_alloc = init, check, on_alloc
    return cap["run"][0], cap["run"][1], calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other worktree (its nki_mlir/runtime/hazards.py)")
    ap.add_argument("--repeat", type=int, default=15)
    opts = ap.parse_args()
    import nki_mlir as nki
    from nki_mlir.runtime import hazards as H
    from toolchain import cases
    path = os.path.join(opts.base, "nki_mlir", "runtime", "hazards.py")
    spec = importlib.util.spec_from_file_location("nki_mlir.runtime._hazards_base", path)
    B = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(B)
    clock = time.process_time
    print(f"this tree {H.__file__} vs {path}; load {os.getloadavg()[0]:.1f}")
    for name, kernel, args, _ in cases(np.random.default_rng(0)):
        prog = nki.compile(kernel, *args, use_cache=False).program
        prog.run(list(args), hazards=True)
        state, qr, calls = _recorded(prog, args, H)
        inner = max(1, 2000 // len(calls))

        def replays(cls):
            def run():
                for _ in range(inner):
                    ck = cls(state, qr)
                    for is_check, a in calls:
                        if is_check:
                            ck.check(*a)
                        else:
                            ck.on_alloc(*a)
            return run
        new, base = replays(H.Checker), replays(B.Checker)
        new()
        base()
        t_new = t_base = float("inf")
        for _ in range(opts.repeat):
            t0 = clock()
            base()
            t_base = min(t_base, clock() - t0)
            t0 = clock()
            new()
            t_new = min(t_new, clock() - t0)
        print(f"  {name:<24} {len(calls):>4} calls/run   this {t_new / inner * 1e6:7.0f} us"
              f"   base {t_base / inner * 1e6:7.0f} us   this/base {t_new / t_base:.3f}")
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
