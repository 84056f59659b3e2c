"""Replay one fuzz case with its traceback: ``python -m fuzz.replay frontend|opt SEED``
(from ``test/``).  Prints the mutant (the changed lines for a kernel) and the exception."""
from __future__ import annotations

import ast
import difflib
import sys
import traceback


def main(argv: list[str]) -> int:
    which, seed = argv[0], int(argv[1])
    if which == "frontend":
        from . import frontend
        from .mutate import mutate_args, mutate_kernel
        name = frontend._NAMES[seed % len(frontend._NAMES)]
        src = mutate_kernel(frontend._SOURCE, name, seed) or ""
        before = ast.unparse(ast.parse(frontend._SOURCE)).splitlines()
        for line in difflib.unified_diff(before, src.splitlines(), lineterm="", n=1):
            print(line)
        print("args:", mutate_args(frontend.seeds.SEEDS[name], seed))
    else:
        from . import opt
        print(opt._CHUNKS[seed % len(opt._CHUNKS)][1])
    import nki_mlir.frontend.trace_build as tb
    orig = tb.python_error

    def verbose(exc, ctx):
        traceback.print_exception(exc)
        return orig(exc, ctx)
    tb.python_error = verbose
    mod = __import__(f"fuzz.{which}", fromlist=["case"])
    print(mod.case(seed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
