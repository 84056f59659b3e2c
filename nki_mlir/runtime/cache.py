"""The compile cache: artifacts on disk plus decoded kernels in memory.

Key (design.md section 7): SHA-256 over the kernel's source file hash and qualified name,
the compiler and xDSL versions, argument shapes/dtypes, compile-time argument values,
target and pipeline options.  The directory is ``$NKI_MLIR_CACHE_DIR`` or
``~/.cache/nki-mlir``.  Entries are written atomically (see ``artifact.write_artifact``);
a damaged entry is reported (a warning) and rebuilt, never trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

_MEMORY: dict[str, Any] = {}


def cache_dir() -> Path:
    """Where artifacts are kept (created on first write)."""
    env = os.environ.get("NKI_MLIR_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nki-mlir"


def cache_key(parts: dict[str, Any]) -> str:
    """A stable hex key for the JSON-able description ``parts``."""
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def memory_get(key: str) -> Any | None:
    return _MEMORY.get(key)


def memory_put(key: str, value: Any) -> None:
    _MEMORY[key] = value


def memory_clear() -> None:
    """Forget every in-memory compiled kernel (the disk cache is kept)."""
    _MEMORY.clear()
