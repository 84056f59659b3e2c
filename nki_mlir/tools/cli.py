"""``nki-mlir``: compile a kernel from a .py file and print its IR at any stage, run it, or
profile it with the cost model.

    nki-mlir compile examples/kernels.py::tensor_add --arg 256x1024xf32 --arg 256x1024xf32 --stage nisa
    nki-mlir run examples/kernels.py::row_softmax --arg 256x512xf32
    nki-mlir profile examples/matmul.py --out /tmp/prof      # every kernel in EXAMPLE_ARGS
    nki-mlir cache info | nki-mlir cache clear                 # the compile cache on disk
    nki-mlir tune FILE.py::KERNEL --arg 512x512xbf16 --space TILE=128,256   # rank variants (docs/autotune.md)

``profile`` prints the cost model's report (estimated latency, roofline bound and ratio,
MFU/MBU, per-queue busy time, critical path, warnings); ``--out DIR`` also writes
``<kernel>.trace.json`` (Perfetto), ``<kernel>.html`` (timeline) and ``<kernel>.txt``;
``--compare`` also estimates the in-order schedule.  Without ``--arg`` the kernel's
arguments come from the file's ``EXAMPLE_ARGS = {"kernel": ["SHAPExDTYPE", ...]}``.

Without ``--arg``, ``compile`` and ``run`` also take the arguments from ``EXAMPLE_ARGS``.

``--arg SHAPExDTYPE`` gives one tensor argument (dtype: f32, bf16, f16, f8e4m3, f8e5m2,
i8/i16/i32, u8/u16/u32, or an NKI name such as float32); ``--const NAME=VALUE`` gives a
compile-time argument (a Python literal).  Errors in the kernel print as located
diagnostics and exit with status 1.

Exit status: 0 success; 1 an error in the kernel or its inputs (a located diagnostic on
stderr); 2 a bad command line (argparse's usage message).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from ..targets import TARGETS
from .kernel_files import (  # noqa: F401  (parse_arg, load_kernel, ...: their old import path)
    example_args, file_kernels, inputs, load_kernel, load_module, parse_arg, parse_consts,
)

_HELP = {"compile": "compile a kernel and print its IR (--stage nki|nisa)",
         "run": "compile a kernel and run it on the ISA interpreter with random inputs",
         "profile": "the cost model's report of a kernel (or of every kernel in EXAMPLE_ARGS)"}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``nki-mlir`` console script; returns the exit status."""
    try:
        status = _main(argv)
        sys.stdout.flush()        # inside the try: a closed pipe surfaces here, not at exit
        return status
    except BrokenPipeError:       # `nki-mlir compile ... | head`: the reader left, quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _main(argv: list[str] | None = None) -> int:
    from ..errors import NKIError
    fmt = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(prog="nki-mlir", description=__doc__, formatter_class=fmt)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("compile", "run", "profile"):
        p = sub.add_parser(cmd, help=_HELP[cmd], description=_HELP[cmd] + ".\n\n" + __doc__,
                           formatter_class=fmt)
        p.add_argument("kernel", help="FILE.py::KERNEL")
        p.add_argument("--arg", action="append", type=parse_arg, default=[], metavar="SHAPExDTYPE")
        p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE")
        p.add_argument("--target", default=None, choices=list(TARGETS))
        p.add_argument("--schedule", default="list", choices=["list", "in-order"],
                       help="nisa-schedule mode (in-order: the serialised baseline)")
        if cmd == "run":
            p.add_argument("--hazards", action="store_true",
                           help="execute the engine queues with hazard checks (NKI_MLIR_HAZARDS=1)")
        if cmd == "compile":
            p.add_argument("--stage", default="nisa", choices=["nki", "nisa"])
            p.add_argument("--debuginfo", action="store_true", help="print op source locations")
        if cmd == "profile":
            p.add_argument("--out", default=None, metavar="DIR",
                           help="write <kernel>.trace.json, <kernel>.html and <kernel>.txt here")
            p.add_argument("--compare", action="store_true",
                           help="also estimate the in-order schedule and print the speedup")
            p.add_argument("--throttle", action="store_true", help="model TensorE power throttling")
    pc = sub.add_parser("cache", help="show or clear the compile cache on disk",
                        description="info: the cache directory, its entries and size; clear: "
                                    "remove every entry. Directory: $NKI_MLIR_CACHE_DIR (default "
                                    "~/.cache/nki-mlir); size limit: $NKI_MLIR_CACHE_MAX_BYTES.")
    pc.add_argument("action", choices=["info", "clear"])
    from .tune_cmd import add_parser, tune_command
    add_parser(sub, fmt)
    ns = ap.parse_args(argv)
    if ns.cmd == "cache":
        return cache_command(ns.action)
    if ns.cmd == "tune":
        return tune_command(ns)
    if ns.cmd == "profile":
        from .profile_cmd import profile
        return profile(ns)
    kernel = load_kernel(ns.kernel)
    consts = parse_consts(ns.const)
    rng = np.random.default_rng(0)
    arrays = inputs(ns.arg or example_args(ns.kernel, kernel), rng)
    try:
        ck = kernel.compile_with(tuple(arrays), consts, use_cache=False, schedule=ns.schedule,
                                 **({"target": ns.target} if ns.target else {}))
        if ns.cmd == "compile":
            text = ck.ir(ns.stage)
            if not ns.debuginfo:
                text = _strip_locs(text)
            sys.stdout.write(text)
            return 0
        t0 = time.perf_counter()
        if ns.hazards:
            os.environ["NKI_MLIR_HAZARDS"] = "1"
        outs = ck(*arrays, **consts)
        dt = time.perf_counter() - t0
        for i, o in enumerate(outs if isinstance(outs, tuple) else (outs,)):
            print(f"output {i}: shape {list(o.shape)} {o.dtype}, mean {np.mean(o.astype(np.float64)):.6g}, "
                  f"nan {int(np.isnan(o.astype(np.float32)).sum())}")
        print(f"ran in {dt * 1e3:.1f} ms on the ISA interpreter")
        return 0
    except NKIError as exc:
        print(exc, file=sys.stderr)
        return 1


def cache_command(action: str) -> int:
    """``nki-mlir cache info``: directory, entries, bytes and limit; ``clear``: remove all."""
    from ..runtime import cache
    d = cache.cache_dir()
    if action == "clear":
        n = cache.clear(d)
        print(f"removed {n} entries from {d}")
        return 0
    es = cache.entries(d)
    total = sum(e.bytes for e in es)
    limit = cache.limit("NKI_MLIR_CACHE_MAX_BYTES", cache.DEFAULT_MAX_BYTES)
    print(f"cache directory: {d}")
    print(f"entries: {len(es)}, {total / 2**20:.2f} MiB of {limit / 2**20:.0f} MiB "
          f"(NKI_MLIR_CACHE_MAX_BYTES; least recently used entries are evicted past it)")
    return 0


def _strip_locs(text: str) -> str:
    import re
    return re.sub(r' loc\((?:[^()"]|"[^"]*")*\)', "", text)


if __name__ == "__main__":
    sys.exit(main())
