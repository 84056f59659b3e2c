"""``nki-mlir profile FILE.py[::KERNEL]``: the cost model's report of kernels in a file
(see :mod:`nki_mlir.tools.cli` for the options)."""
from __future__ import annotations

import os
import sys

import numpy as np


def _targets(ns, mod) -> list[tuple[str, object, list]]:
    """``[(name, kernel, [(shape, dtype), ...])]`` to profile."""
    from .kernel_files import file_kernels, parse_arg
    path, _, name = ns.kernel.partition("::")
    kernels = file_kernels(mod)
    examples = getattr(mod, "EXAMPLE_ARGS", {}) or {}
    if name:
        if name not in kernels:
            raise SystemExit(f"nki-mlir: no @nki.jit kernel named {name!r} in {path}")
        names = [name]
    elif ns.arg:
        if len(kernels) != 1:
            raise SystemExit(f"nki-mlir: {path} defines {len(kernels)} kernels; name one with "
                             f"FILE::KERNEL ({', '.join(kernels)})")
        names = list(kernels)
    else:
        names = [k for k in kernels if k in examples] or list(kernels)
    out = []
    for k in names:
        if ns.arg:
            args = ns.arg
        elif k in examples:
            args = [parse_arg(a) for a in examples[k]]
        else:
            raise SystemExit(f"nki-mlir: give the arguments of {k} with --arg SHAPExDTYPE (or list "
                             f"them in {path}'s EXAMPLE_ARGS)")
        out.append((k, kernels[k], args))
    return out


def profile(ns) -> int:
    """Run the ``profile`` command; returns the exit status."""
    from ..errors import NKIError
    from ..perf.report import fmt_ns, format_report, write_profile_files
    from .kernel_files import load_module, parse_consts
    mod = load_module(ns.kernel.partition("::")[0])
    consts = parse_consts(ns.const)
    opts = {"target": ns.target} if ns.target else {}
    status = 0
    for name, kernel, args in _targets(ns, mod):
        arrays = [np.zeros(shape, dtype=dt) for shape, dt in args]
        try:
            ck = kernel.compile_with(tuple(arrays), consts, use_cache=False, schedule=ns.schedule, **opts)
            est = ck.estimate(keep_slices=bool(ns.out), throttle=ns.throttle)
            print(format_report(est))
            if ns.compare:
                other = "in-order" if ns.schedule == "list" else "list"
                ck2 = kernel.compile_with(tuple(arrays), consts, use_cache=False, schedule=other, **opts)
                est2 = ck2.estimate(keep_slices=False, throttle=ns.throttle)
                base, ours = (est2, est) if other == "in-order" else (est, est2)
                print(f"  {other} schedule: {fmt_ns(est2.latency_ns)}; list schedule is "
                      f"{base.latency_ns / ours.latency_ns:.2f}x faster than in-order")
            if ns.out:
                files = write_profile_files(est, os.path.join(ns.out, name))
                print(f"  wrote {files['trace']} (open at ui.perfetto.dev), {files['html']}, "
                      f"{files['report']}")
            print()
        except NKIError as exc:
            print(exc, file=sys.stderr)
            status = 1
    return status
