"""The kernel artifact: a versioned directory holding ``manifest.json`` and the final IR.

Layout (design.md section 7)::

    <kernel>-<key16>/
        manifest.json        format + version, compiler/xdsl versions, target, kernel name,
                             argument and output specs, memory map, pipeline, source hash,
                             SHA-256 of every file below
        kernel.nisa.mlir     the final nisa module (what the interpreter executes)
        kernel.nki.mlir      the nki module the frontend produced (for ck.ir("nki"))

Loading never executes code from the artifact: the manifest is JSON and the modules are
parsed by xDSL's MLIR parser.  A damaged or foreign artifact raises
:class:`~nki_mlir.errors.ArtifactError`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import ArtifactError

FORMAT = "nki-mlir-artifact"
FORMAT_VERSION = 1
FILES = {"nisa": "kernel.nisa.mlir", "nki": "kernel.nki.mlir"}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_artifact(dest: Path, manifest: dict[str, Any], ir: dict[str, str]) -> Path:
    """Write an artifact atomically: build it in a temporary sibling dir, then rename.

    If ``dest`` already exists (another process won the race) the existing one is kept.
    Returns ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-" + dest.name + "-", dir=dest.parent))
    try:
        digests = {}
        for stage, fname in FILES.items():
            data = ir[stage].encode()
            (tmp / fname).write_bytes(data)
            digests[fname] = _sha256(data)
        full = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest, "files": FILES,
                "sha256": digests}
        (tmp / "manifest.json").write_text(json.dumps(full, indent=2, sort_keys=True, default=_json))
        try:
            os.rename(tmp, dest)
        except OSError:
            if not (dest / "manifest.json").exists():
                shutil.rmtree(dest, ignore_errors=True)
                os.rename(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def read_artifact(path: Path, *, compiler_version: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Read and check an artifact; returns ``(manifest, {"nisa": text, "nki": text})``.

    Raises:
        ArtifactError: missing files, bad JSON, foreign format, unsupported version, a
            different compiler version (when given) or a checksum mismatch.
    """
    path = Path(path)
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except FileNotFoundError:
        raise ArtifactError(f"{path}: no manifest.json (not a kernel artifact)") from None
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{path}: unreadable manifest.json ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArtifactError(f"{path}: not an nki-mlir artifact (format {manifest.get('format')!r})"
                            if isinstance(manifest, dict) else f"{path}: manifest is not an object")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ArtifactError(f"{path}: artifact format version {manifest.get('format_version')!r}, "
                            f"this compiler reads version {FORMAT_VERSION}")
    if compiler_version is not None and manifest.get("compiler_version") != compiler_version:
        raise ArtifactError(f"{path}: built by nki-mlir {manifest.get('compiler_version')}, "
                            f"this is {compiler_version}")
    ir: dict[str, str] = {}
    for stage, fname in FILES.items():
        try:
            data = (path / fname).read_bytes()
        except OSError as exc:
            raise ArtifactError(f"{path}: missing {fname} ({exc.strerror})") from None
        if _sha256(data) != manifest.get("sha256", {}).get(fname):
            raise ArtifactError(f"{path}: {fname} does not match its checksum (damaged artifact)")
        ir[stage] = data.decode()
    return manifest, ir


def _json(o: Any) -> Any:
    if hasattr(o, "__dataclass_fields__"):
        return asdict(o)
    return repr(o)
