"""The results cache of sweeps: one small JSON file per (kernel source, arguments, options)
in the compile cache directory, so a repeated sweep is answered without compiling,
estimating or running anything.

File ``<cache dir>/autotune.<kernel>-<key16>.json`` (an entry of the compile cache like
any other: ``nki-mlir cache clear`` removes it, eviction counts it).  Its key hashes the
kernel's source file and qualified name, the values it reads at compile time, the
compiler version, the tensor arguments (shapes, dtypes and data), the fixed constants and
the sweep options.  Content::

    {"variants": {params_key: row}, "checks": {reference_id: {params_key: reason-or-null}}}

``variants`` holds what does not depend on the reference (compile, estimate, run);
``checks`` the comparison with one reference.  Rows of transient failures (``internal
error``, ``worker died``) are not stored.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

_TRANSIENT = ("internal error", "worker died")


def array_digest(arrays) -> str:
    """SHA-256 over shapes, dtypes and bytes of ``arrays``."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.shape}{a.dtype.str}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def sweep_key(fn: Any, opts: Any) -> str | None:
    """The content key of a sweep of ``fn`` with :class:`.variant.Options` ``opts``, or
    None when part of it has no stable representation (then nothing is cached)."""
    from ..version import __version__
    from ..frontend.source import FunctionSource, file_hash, referenced_values_digest
    from ..runtime import cache
    src = FunctionSource.of(fn)
    parts = {"source": file_hash(src.file) if src else "", "qualname": fn.__qualname__,
             "module": fn.__module__, "referenced_values": referenced_values_digest(fn),
             "compiler": __version__, "args": array_digest(opts.arrays),
             "consts": {k: repr(v) for k, v in sorted(opts.consts.items())},
             "options": [opts.target, opts.schedule, opts.check, opts.hazards, opts.rtol, opts.atol]}
    try:
        return cache.cache_key(parts)
    except cache.UnstableKey:
        return None


class ResultStore:
    """The results cache file of one sweep key (in memory until :meth:`save`); a no-op
    when ``key`` is None."""

    def __init__(self, kernel_name: str, key: str | None):
        from ..runtime import cache
        self.path = None if key is None else cache.cache_dir() / f"autotune.{kernel_name}-{key[:16]}.json"
        self.data: dict = {"variants": {}, "checks": {}}
        self.dirty = False
        if self.path is not None and self.path.is_file():
            try:
                data = json.loads(self.path.read_text())
                if isinstance(data.get("variants"), dict) and isinstance(data.get("checks"), dict):
                    self.data = data
            except (OSError, ValueError):
                pass          # a damaged file is rebuilt

    def variant(self, pk: str) -> dict | None:
        return self.data["variants"].get(pk)

    def check(self, ref_id: str, pk: str) -> tuple[bool, str | None]:
        """``(known, reason)``: whether the comparison is cached, and its mismatch reason."""
        checks = self.data["checks"].get(ref_id, {})
        return (pk in checks, checks.get(pk))

    def put(self, pk: str, row: dict, ref_id: str | None) -> None:
        if self.path is None or row["status"] in _TRANSIENT:
            return
        base = {k: v for k, v in row.items() if k not in ("outputs", "cached")}
        mismatch = base["status"] == "mismatch"
        if mismatch:
            base["status"], base["reason"] = "ok", ""
        base["checked"] = False
        self.data["variants"][pk] = base
        if ref_id is not None and row.get("checked"):
            self.data["checks"].setdefault(ref_id, {})[pk] = row["reason"] if mismatch else None
        self.dirty = True

    def save(self) -> None:
        """Write the file atomically (if anything changed)."""
        if self.path is None or not self.dirty:
            return
        from ..runtime import cache
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(self.data, f, default=repr)
        new = not self.path.exists()
        os.replace(tmp, self.path)
        if new:
            cache.added(Path(self.path))
        self.dirty = False
