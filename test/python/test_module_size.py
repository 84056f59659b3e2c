"""Small files with one idea each: no module of ``nki_mlir`` is over :data:`MAX_LINES` lines.

A module that grows past the limit is split by idea (as ``dialects/matmul_rules.py`` was
split out of ``dialects/rules.py``), not cut at an arbitrary line.
"""
from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_LINES = 500


def test_no_module_over_the_limit():
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines())
             for p in (ROOT / "nki_mlir").rglob("*.py")}
    assert sizes, "no modules found"
    over = sorted((n, f) for f, n in sizes.items() if n > MAX_LINES)
    assert not over, f"modules over {MAX_LINES} lines (split them by idea): {over}"
