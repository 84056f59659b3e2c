"""The kernel artifact: a versioned directory holding ``manifest.json`` and the final IR.

Layout (docs/backend.md)::

    <kernel>-<key16>/
        manifest.json        format + version, compiler/xdsl versions, target, kernel name,
                             argument and output specs, memory map, pipeline, source hash,
                             SHA-256 of every file below
        kernel.nisa.mlir     the final nisa module (what the interpreter executes)
        kernel.nki.mlir      the nki module the frontend produced (for ck.ir("nki"))
        kernel.nisa.compact.json   optional: the nisa module in the compact form of
                             runtime/ir_compact.py (JSON), decoded on a cache hit instead of
                             parsing kernel.nisa.mlir again; listed under "files" when present
        kernel.nki.compact.json    optional: the nki module in that form (placed artifacts)

The artifact of a *placed* compile (``manifest["stage"] == "placed"``: the module before
``nisa-schedule``, what a program-order kernel call runs; nki_mlir/driver/schedule_stage.py)
may hold each module in the compact form only, without its ``.mlir`` text: the text of a
large unrolled kernel takes seconds to print (an nki-library attention instance: 69 MB of
nki text, 9.2 s to print, 4.3 s to encode compactly) and is printed from the compact form
when asked for (:func:`required`).

Loading never executes code from the artifact: the manifest is JSON and the modules are
parsed by xDSL's MLIR parser or rebuilt from the compact form (JSON data naming
attribute and op classes of a closed table).  A damaged or foreign artifact raises
:class:`~nki_mlir.errors.ArtifactError`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import ArtifactError

FORMAT = "nki-mlir-artifact"
FORMAT_VERSION = 1
FILES = {"nisa": "kernel.nisa.mlir", "nki": "kernel.nki.mlir"}
#: files an artifact may hold (stage -> file name), checked like the others when listed
OPTIONAL = {"compact": "kernel.nisa.compact.json", "nki_compact": "kernel.nki.compact.json"}
#: every file an artifact may list
ALL_FILES = {**FILES, **OPTIONAL}


def required(manifest: dict[str, Any]) -> list[set[str]]:
    """The stages an artifact of this manifest holds, as groups of which it holds at least
    one each: a final artifact holds the text of both modules; a placed one (module
    docstring) each module as text, compact form or both."""
    if manifest.get("stage") == "placed":
        return [{"nki", "nki_compact"}, {"nisa", "compact"}]
    return [{s} for s in FILES]


def _check_listed(listed: set[str], manifest: dict[str, Any]) -> str | None:
    """What an artifact listing the stages ``listed`` lacks, or None."""
    lacks = [" or ".join(sorted(ALL_FILES[s] for s in group))
             for group in required(manifest) if not group & listed]
    return "no " + ", ".join(lacks) if lacks else None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest_digest(manifest: dict[str, Any]) -> str:
    """SHA-256 of the manifest's canonical JSON without its own ``manifest_sha256`` field."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return _sha256(json.dumps(body, sort_keys=True, default=_json).encode())


def encode(manifest: dict[str, Any], ir: dict[str, str]) -> dict[str, bytes]:
    """The files of an artifact (name -> bytes): the IR files and ``manifest.json`` holding
    the format, ``manifest``'s fields, the SHA-256 of every IR file and of the manifest
    itself (``manifest_sha256``, over the canonical JSON of every other field)."""
    listed = {st: f for st, f in ALL_FILES.items() if ir.get(st) is not None}
    if (lack := _check_listed(set(listed), manifest)) is not None:
        raise ValueError(f"internal error: an artifact with {lack}")
    files = {fname: ir[stage].encode() for stage, fname in listed.items()}
    full = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest, "files": listed,
            "sha256": {fname: _sha256(data) for fname, data in files.items()}}
    full = json.loads(json.dumps(full, default=_json))   # what a reader will see
    full["manifest_sha256"] = _manifest_digest(full)
    files["manifest.json"] = json.dumps(full, indent=2, sort_keys=True).encode()
    return files


def write_artifact(dest: Path, manifest: dict[str, Any], ir: dict[str, str]) -> Path:
    """Write an artifact atomically: build it in a temporary sibling dir, then rename.

    If ``dest`` already exists (another process won the race) the existing one is kept.
    Returns ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-" + dest.name + "-", dir=dest.parent))
    try:
        for fname, data in encode(manifest, ir).items():
            (tmp / fname).write_bytes(data)
        try:
            os.rename(tmp, dest)
        except OSError:
            if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
                dest.unlink()            # a damaged entry: never write through a symlink
                os.rename(tmp, dest)
            elif not (dest / "manifest.json").exists():
                shutil.rmtree(dest, ignore_errors=True)
                os.rename(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def save_files(dest: Path, manifest: dict[str, Any], ir: dict[str, str]) -> None:
    """Write the artifact's files into the existing or new directory ``dest`` (a copy the
    user asked for, e.g. ``artifacts_dir=``); files of other names there are left alone."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for fname, data in encode(manifest, ir).items():
        (dest / fname).write_bytes(data)


def _read(path: Path, fname: str) -> bytes:
    """A regular file of the artifact directory, never through a symlink."""
    try:
        fd = os.open(path / fname, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise ArtifactError(f"{path}: missing {fname}") from None
    except OSError as exc:
        raise ArtifactError(f"{path}: unreadable {fname} ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ArtifactError(f"{path}: {fname} is not a regular file")
        return fh.read()


def read_artifact(path: Path, *, compiler_version: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Read and check an artifact; returns ``(manifest, {stage: text})``: ``"nki"`` and/or
    ``"nki_compact"``, ``"nisa"`` and/or ``"compact"`` (:func:`required`).

    Raises:
        ArtifactError: not a real directory (a symlink or a plain file), missing files, bad
            JSON, foreign format, unsupported version, a different compiler version (when
            given), a malformed field or a checksum mismatch (of an IR file or of the
            manifest itself).
    """
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        raise ArtifactError(f"{path}: not a directory (a kernel artifact is a directory)"
                            if not path.is_symlink() else f"{path}: is a symlink (not followed)")
    try:
        manifest = json.loads(_read(path, "manifest.json"))
    except ArtifactError as exc:
        if "missing" in str(exc):
            raise ArtifactError(f"{path}: no manifest.json (not a kernel artifact)") from None
        raise
    except ValueError as exc:
        raise ArtifactError(f"{path}: unreadable manifest.json ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArtifactError(f"{path}: not an nki-mlir artifact (format {manifest.get('format')!r})"
                            if isinstance(manifest, dict) else f"{path}: manifest is not an object")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ArtifactError(f"{path}: artifact format version {manifest.get('format_version')!r}, "
                            f"this compiler reads version {FORMAT_VERSION}")
    if manifest.get("manifest_sha256") != _manifest_digest(manifest):
        raise ArtifactError(f"{path}: manifest.json does not match its checksum (damaged artifact)")
    if compiler_version is not None and manifest.get("compiler_version") != compiler_version:
        raise ArtifactError(f"{path}: built by nki-mlir {manifest.get('compiler_version')}, "
                            f"this is {compiler_version}")
    sums = manifest.get("sha256")
    if not isinstance(sums, dict):
        raise ArtifactError(f"{path}: malformed manifest (sha256 is not an object)")
    ir: dict[str, str] = {}
    listed = manifest.get("files")
    listed = {st: f for st, f in ALL_FILES.items() if isinstance(listed, dict) and listed.get(st) == f}
    if (lack := _check_listed(set(listed), manifest)) is not None:
        raise ArtifactError(f"{path}: malformed manifest (its files list {lack})")
    for stage, fname in listed.items():
        data = _read(path, fname)
        if _sha256(data) != sums.get(fname):
            raise ArtifactError(f"{path}: {fname} does not match its checksum (damaged artifact)")
        try:
            ir[stage] = data.decode()
        except UnicodeDecodeError:
            raise ArtifactError(f"{path}: {fname} is not UTF-8 text (damaged artifact)") from None
    return manifest, ir


def _json(o: Any) -> Any:
    if hasattr(o, "__dataclass_fields__"):
        return asdict(o)
    return repr(o)
