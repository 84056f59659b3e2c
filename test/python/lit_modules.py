"""The modules of the lit tests' ``.mlir`` files, for tests that check a rule over all of them."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from nki_mlir.dialects import make_context

LIT = Path(__file__).resolve().parents[1] / "lit"


def lit_modules(paths: Iterable[Path]) -> Iterator[tuple[Path, ModuleOp]]:
    """``(path, module)`` of every ``// -----`` chunk of ``paths`` that parses (a chunk
    testing a parse error is skipped)."""
    ctx = make_context()
    for path in paths:
        for chunk in path.read_text().split("// -----"):
            try:
                module = Parser(ctx, chunk).parse_module()
            except Exception:  # noqa: BLE001 -- a chunk testing a parse error
                continue
            yield path, module
