"""The compile cache: artifacts on disk plus decoded kernels in memory.

Key: SHA-256 over content only — the kernel's source file hash and
qualified name, what it reads at compile time, the compiler and xDSL versions (as strings),
argument shapes/dtypes, compile-time argument values, target and pipeline options — so the
same kernel hits across processes.  The directory is ``$NKI_MLIR_CACHE_DIR`` or
``~/.cache/nki-mlir``.  Entries are written atomically (see ``artifact.write_artifact``);
a damaged entry is reported (a warning) and rebuilt, never trusted, and an entry whose
manifest names other compiler sources (:func:`compiler_digest`: an edited checkout, an upgrade
without a version bump) is rebuilt too, so no artifact of an older compiler is ever run.

Both levels are bounded, least recently used first out:

- in memory, ``$NKI_MLIR_MEMORY_CACHE_ENTRIES`` compiled kernels (default 256) holding
  together at most ``$NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS`` instructions of decoded programs
  (default 20,000; an entry's :func:`weight`, its program's static instruction count),
  checked when an entry is added and when a kept kernel is decoded (:func:`memory_trim`;
  the most recently used entry is kept whatever its weight).  A decoded program keeps
  Python objects alive (closures, cells, slot tuples, views): about 20 per instruction for
  a simple unrolled kernel, about 140 for an nki-library qkv_cte kernel (8,207 instructions,
  about 1.15 M objects), and every full collection of the cyclic garbage collector walks
  them all at about 0.6 us an object -- each large kernel call ends with one
  (:mod:`.gc_pause`): 4 such kernels kept made that collection take 3.9 s CPU.
  Evicting an entry also drops what else refers to it (:func:`on_evict`: its warm-call
  plans);
- on disk, ``$NKI_MLIR_CACHE_MAX_BYTES`` bytes (default 1 GiB; a hit refreshes an entry's
  modification time, which is its recency).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_MEMORY: "OrderedDict[str, Any]" = OrderedDict()
DEFAULT_MEMORY_ENTRIES = 256
DEFAULT_MEMORY_INSTRUCTIONS = 20_000
#: called with the key of every entry leaving the in-memory cache (:func:`on_evict`)
_EVICT_HOOKS: list = []
DEFAULT_MAX_BYTES = 1 << 30


_COMPILER_DIGEST: list[str] = []


def compiler_digest(root: Path | None = None) -> str:
    """SHA-256 (16 hex digits) over the relative path and bytes of every ``.py`` file under
    ``root`` (default: the ``nki_mlir`` package, computed once per process, about 2 MB read)."""
    if root is None and _COMPILER_DIGEST:
        return _COMPILER_DIGEST[0]
    base = root if root is not None else Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(base.rglob("*.py")):
        h.update(str(f.relative_to(base)).encode())
        h.update(f.read_bytes())
    digest = h.hexdigest()[:16]
    if root is None:
        _COMPILER_DIGEST.append(digest)
    return digest


class UnstableKey(TypeError):
    """A cache-key part has no content-based representation (its repr names an address)."""


def cache_dir() -> Path:
    """Where artifacts are kept (created on first write)."""
    env = os.environ.get("NKI_MLIR_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nki-mlir"


def _content(o: Any) -> str:
    text = repr(o)
    if " at 0x" in text or " object at " in text:
        raise UnstableKey(f"cache key part {type(o).__qualname__} has no stable representation")
    return text


def cache_key(parts: dict[str, Any]) -> str:
    """A stable hex key for the JSON-able description ``parts``.

    Raises:
        UnstableKey: a part is an object whose only representation is its memory address
            (such a key would never hit in another process); callers compile uncached.
    """
    text = json.dumps(parts, sort_keys=True, default=_content)
    return hashlib.sha256(text.encode()).hexdigest()


def limit(name: str, default: int) -> int:
    try:
        return max(0, int(os.environ.get(name, default)))
    except ValueError:
        return default


def memory_get(key: str) -> Any | None:
    value = _MEMORY.get(key)
    if value is not None:
        _MEMORY.move_to_end(key)
    return value


def weight(value: Any) -> int:
    """The instructions an in-memory entry keeps decoded: ``value.weight()`` when it has
    one (:meth:`nki_mlir.compiler.CompiledKernel.weight`), else 0."""
    w = getattr(value, "weight", None)
    return int(w()) if callable(w) else 0


def memory_put(key: str, value: Any) -> None:
    """Keep ``value`` under ``key`` as the most recently used entry, then drop the least
    recently used ones past either bound (module docstring), calling the :func:`on_evict`
    hooks with each dropped key."""
    _MEMORY[key] = value
    _MEMORY.move_to_end(key)
    memory_trim()


def memory_trim() -> None:
    """Drop the least recently used entries while either bound is exceeded (the most recent
    entry stays, unless ``$NKI_MLIR_MEMORY_CACHE_ENTRIES`` is 0): after an entry is added,
    and after a kept kernel's program is decoded (its weight grows then)."""
    cap = limit("NKI_MLIR_MEMORY_CACHE_ENTRIES", DEFAULT_MEMORY_ENTRIES)
    budget = limit("NKI_MLIR_MEMORY_CACHE_INSTRUCTIONS", DEFAULT_MEMORY_INSTRUCTIONS)
    total = sum(weight(v) for v in _MEMORY.values())
    while len(_MEMORY) > cap or (len(_MEMORY) > 1 and total > budget):
        old, v = _MEMORY.popitem(last=False)
        total -= weight(v)
        _evicted(old)


def memory_clear() -> None:
    """Forget every in-memory compiled kernel (the disk cache is kept)."""
    keys = list(_MEMORY)
    _MEMORY.clear()
    for k in keys:
        _evicted(k)


def on_evict(hook) -> None:
    """Call ``hook(key)`` whenever the entry ``key`` leaves the in-memory cache (so that
    what refers to its value, such as a warm call's plan, lets it go too)."""
    if hook not in _EVICT_HOOKS:
        _EVICT_HOOKS.append(hook)


def _evicted(key: str) -> None:
    for hook in _EVICT_HOOKS:
        hook(key)


# ------------------------------------------------------------------------------ disk


@dataclass
class Entry:
    """One directory of the disk cache: its path, size in bytes and last use (mtime, s)."""
    path: Path
    bytes: int
    last_use: float


def _size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def entries(directory: Path | None = None) -> list[Entry]:
    """The disk cache's entries, least recently used first (temporary dirs of writes in
    progress, named ``.tmp-*``, are not entries)."""
    d = Path(directory or cache_dir())
    out = []
    try:
        names = os.listdir(d)
    except OSError:
        return []
    for name in names:
        if name.startswith(".tmp-"):
            continue
        p = d / name
        try:
            st = os.lstat(p)
        except OSError:
            continue
        out.append(Entry(p, _size(p) if p.is_dir() and not p.is_symlink() else st.st_size, st.st_mtime))
    out.sort(key=lambda e: e.last_use)
    return out


def touch(path: Path) -> None:
    """Mark an entry as just used (its recency for eviction)."""
    try:
        os.utime(path)
    except OSError:
        pass


def remove(path: Path) -> None:
    """Remove one entry (a directory, or whatever else sits at its name); never follows a
    symlink out of the cache directory."""
    p = Path(path)
    if p.is_symlink() or not p.is_dir():
        try:
            p.unlink()
        except OSError:
            pass
    else:
        shutil.rmtree(p, ignore_errors=True)


_USAGE: dict[Path, int] = {}   # bytes in each cache directory, as this process last saw it


def evict(directory: Path | None = None, max_bytes: int | None = None, keep: Path | None = None) -> list[Path]:
    """Remove least recently used entries until the cache holds at most ``max_bytes``
    (default ``$NKI_MLIR_CACHE_MAX_BYTES`` or 1 GiB); ``keep`` is never removed.
    Returns the removed paths."""
    cap = limit("NKI_MLIR_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES) if max_bytes is None else max_bytes
    d = Path(directory or cache_dir())
    es = entries(d)
    total = sum(e.bytes for e in es)
    removed = []
    for e in es:
        if total <= cap:
            break
        if keep is not None and e.path == Path(keep):
            continue
        remove(e.path)
        total -= e.bytes
        removed.append(e.path)
    _USAGE[d] = total
    return removed


def added(path: Path) -> None:
    """Account for the new entry ``path`` and evict past the size limit.  The directory is
    scanned once per process and again only when this process's running total passes the
    limit, so a write costs O(1) stat calls and not a walk of the whole cache."""
    d = Path(path).parent
    if d not in _USAGE:
        evict(d, keep=path)
        return
    _USAGE[d] += _size(Path(path))
    if _USAGE[d] > limit("NKI_MLIR_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES):
        evict(d, keep=path)


def clear(directory: Path | None = None) -> int:
    """Remove every entry of the disk cache and forget the in-memory kernels; returns the
    number of disk entries removed."""
    es = entries(directory)
    for e in es:
        remove(e.path)
    memory_clear()
    return len(es)
