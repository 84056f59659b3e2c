"""Progress bars for long work (large compiles, fuzz and soak runs), from tqdm: shown on a
terminal only (stderr a TTY), never in pipes, logs or CI; ``NKI_MLIR_PROGRESS=0`` turns
them off everywhere, ``NKI_MLIR_PROGRESS=1`` forces them on."""
from __future__ import annotations

import os
import sys
from typing import Any


class _Silent:
    """What :func:`bar` returns when no bar is shown: the same methods, doing nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


SILENT = _Silent()


def enabled() -> bool:
    """Whether bars are shown: ``NKI_MLIR_PROGRESS`` if set, else stderr is a terminal."""
    env = os.environ.get("NKI_MLIR_PROGRESS")
    if env is not None and env != "":
        return env not in ("0", "false", "no")
    return sys.stderr.isatty()


def bar(total: int, desc: str, unit: str = "it"):
    """A tqdm bar on stderr of ``total`` steps (or a silent stand-in, see :func:`enabled`)."""
    if not enabled():
        return SILENT
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True)
