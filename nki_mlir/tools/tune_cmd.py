"""``nki-mlir tune FILE.py::KERNEL --arg SHAPExDTYPE ... --space NAME=V1,V2 ...``: sweep a
kernel's compile-time parameters on the cost model and print the ranked table
(:func:`nki_mlir.autotune.tune`).

Each ``--space NAME=V1,V2,...`` gives the values of one keyword parameter (Python
literals, or bare words as strings: ``--space TILE=128,256,512 --space ORDER=mn,nm``); the sweep is every
combination (``--search optuna --trials N`` samples N of them).  Arguments come from
``--arg`` or the file's ``EXAMPLE_ARGS``; ``--const NAME=VALUE`` fixes a parameter.

Exit status: 0 when some variant is valid; 1 when every variant is rejected or the
kernel cannot be loaded; 2 a bad command line.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys

from ..targets import TARGETS


def add_parser(sub, formatter) -> None:
    """The ``tune`` subcommand's arguments."""
    p = sub.add_parser("tune", help="sweep compile-time parameters on the cost model and rank them",
                       description=__doc__, formatter_class=formatter)
    p.add_argument("kernel", help="FILE.py::KERNEL")
    p.add_argument("--arg", action="append", default=[], metavar="SHAPExDTYPE")
    p.add_argument("--space", action="append", default=[], metavar="NAME=V1,V2,...", required=True)
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--target", default=None, choices=list(TARGETS))
    p.add_argument("--schedule", default=None, choices=["list", "in-order"])
    p.add_argument("--workers", type=int, default=None, help="local processes (default: CPU count)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run variants as Ray tasks: 'local', 'auto' or a cluster address")
    p.add_argument("--search", default="exhaustive", choices=["exhaustive", "optuna"])
    p.add_argument("--trials", type=int, default=None, help="variants Optuna samples (default 64)")
    p.add_argument("--no-check", action="store_true", help="skip running variants on the interpreter")
    p.add_argument("--no-hazards", action="store_true", help="run without the hazard checks")
    p.add_argument("--no-cache", action="store_true", help="ignore the results cache")
    p.add_argument("--top", type=int, default=None, help="show only the N fastest valid variants")
    p.add_argument("--json", default=None, metavar="FILE", help="also write every row as JSON")


def parse_space(items: list[str]) -> dict:
    """``["TILE=128,256"]`` -> ``{"TILE": [128, 256]}`` (each value a Python literal)."""
    space = {}
    for item in items:
        name, eq, text = item.partition("=")
        try:
            if not (eq and name.isidentifier()):
                raise ValueError
            try:
                values = ast.literal_eval(f"[{text}]")
            except (ValueError, SyntaxError):      # bare words are strings: ORDER=mn,nm
                values = [_literal_or_word(v.strip()) for v in text.split(",")]
            if not values:
                raise ValueError
        except (ValueError, SyntaxError):
            raise SystemExit(f"nki-mlir: bad --space {item!r}: expected NAME=V1,V2,... with "
                             f"Python literal values, e.g. --space TILE=128,256,512") from None
        space[name] = values
    return space


def _literal_or_word(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text.isidentifier():
            return text
        raise


def tune_command(ns) -> int:
    """Run ``nki-mlir tune``; returns the exit status."""
    from ..autotune import tune
    from ..errors import NKIError
    from .kernel_files import example_args, load_kernel, parse_arg, parse_consts
    space = parse_space(ns.space)
    kernel = load_kernel(ns.kernel)
    consts = parse_consts(ns.const)
    try:
        args = [parse_arg(a) for a in ns.arg] or example_args(ns.kernel, kernel)
    except argparse.ArgumentTypeError as exc:   # what parse_arg raises for a bad SHAPExDTYPE
        raise SystemExit(f"nki-mlir: {exc}") from None
    if not args:
        raise SystemExit(f"nki-mlir: give the arguments of {kernel.fn.__name__} with --arg "
                         f"SHAPExDTYPE (or list them in the file's EXAMPLE_ARGS)")
    try:
        res = tune(kernel, args, space, consts=consts, check=not ns.no_check,
                   hazards=not ns.no_hazards, workers=ns.workers, ray_address=ns.ray,
                   search=ns.search, n_trials=ns.trials, target=ns.target,
                   schedule=ns.schedule, use_cache=not ns.no_cache)
    except NKIError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(res.table(ns.top))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump({"kernel": res.kernel, "backend": res.backend, "seconds": res.seconds,
                       "reference": res.reference, "rows": [r.to_dict() for r in res.rows]},
                      f, indent=1, default=repr)
    if res.best is None:
        print("nki-mlir: every variant was rejected", file=sys.stderr)
        return 1
    print(f"best: {', '.join(f'{k}={v!r}' for k, v in res.best.params.items())}")
    return 0
