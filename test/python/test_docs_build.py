"""The docs site (mkdocs.yml, docs/) builds with ``mkdocs build --strict`` (every warning an
error: a broken link, a docstring mkdocstrings cannot parse, a page missing from the nav),
and its API pages document the public names."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _text(site: Path, page: str) -> str:
    """The visible text of a built page (tags removed)."""
    return re.sub(r"<[^>]+>", "", (site / page / "index.html").read_text())


@pytest.mark.parametrize("page, names", [
    ("api/nki_mlir", ["#nki_mlir.jit", "#nki_mlir.simulate", "#nki_mlir.compile",
                      "#nki_mlir.benchmark", "#nki_mlir.profile"]),
    ("api/language", ["nl.ndarray", "nl.affine_range", "nl.add", "#nki_mlir.language.NKIObject"]),
    ("api/isa", ["nisa.nc_matmul", "nisa.dma_copy", "nisa.tensor_tensor",
                 "#nki_mlir.isa.NkiValidationError"]),
    ("api/errors", ["#nki_mlir.errors.NKIError", "#nki_mlir.errors.NKIRangeWarning",
                    "#nki_mlir.errors.NKIKernelWarning", "#nki_mlir.errors.NKIInternalError"]),
    ("api/compiler", ["#nki_mlir.compiler.CompiledKernel", "#nki_mlir.compiler.CompiledKernel.ir",
                      "#nki_mlir.compiler.CompiledKernel.estimate"]),
    ("api/cache", ["#nki_mlir.runtime.cache.cache_dir", "#nki_mlir.runtime.cache.clear"]),
    ("api/perf", ["nki_mlir.perf.estimate", "keep_slices", "#nki_mlir.perf.Estimate"]),
])
def test_api_pages_document_public_names(site, page, names):
    """``#name``: an mkdocstrings entry (its anchor); otherwise text shown on the page."""
    html, text = (site / page / "index.html").read_text(), _text(site, page)
    missing = [n for n in names
               if (f'id="{n[1:]}"' not in html if n.startswith("#") else n not in text)]
    assert not missing, f"{page}: not documented: {missing}"


def test_signatures_come_from_the_handlers(site):
    """The nisa table shows each instruction's real signature (dst first)."""
    assert re.search(r"nisa\.tensor_tensor\s*\(dst, data1, data2, op", _text(site, "api/isa"))


def test_pages_cite_no_internal_files(site):
    """Docstrings shown to users name public NKI pages, not the team's internal notes."""
    for page in sorted(p.parent for p in site.rglob("index.html")):
        text = (page / "index.html").read_text()
        assert "nki_spec.md" not in text and "design.md" not in text, page


def test_shown_commands_still_print_what_the_pages_show(tmp_path):
    """Every command of the Getting started, Pipeline, Diagnostics and CLI pages runs (with
    the exit status the page says) and, except for timings and random values, prints exactly
    the output the pages include.  After a change of the compiler's output, re-capture with
    ``python docs/snippets/capture.py`` and review the diff."""
    sys.path.insert(0, str(ROOT / "docs" / "snippets"))
    try:
        import capture
    finally:
        sys.path.pop(0)
    out = tmp_path / "out"
    out.mkdir()
    written = capture.capture(out, workdir=capture.WORKDIR)
    stale = [name for name in written if name not in capture.VOLATILE
             and (out / name).read_text() != (capture.HERE / name).read_text()]
    assert not stale, (f"docs/snippets outputs differ from a fresh run: {stale}; "
                       f"run `python docs/snippets/capture.py` and review the diff")
