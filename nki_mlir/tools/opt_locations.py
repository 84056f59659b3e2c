"""Source positions of parsed ops, so that ``nki-opt`` reports a verifier failure at
``file:line:col`` of the op in the input file (xDSL's operations do not keep where they
were parsed from).

:class:`PositionParser` records the offset at which each operation starts;
:func:`located_message` turns a :class:`~xdsl.utils.exceptions.DiagnosticException` into
``file:line:col: error: message`` with the source line and a caret, at the op that fails its
own verifier (else the op the message names, else the nearest recorded ancestor).
"""
from __future__ import annotations

import re

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException


class PositionParser(Parser):
    """xDSL's parser, recording ``positions[id(op)] = offset`` of every parsed operation."""

    def __init__(self, *args, positions: dict[int, int], **kwargs):
        super().__init__(*args, **kwargs)
        self.positions = positions

    failed_at: int | None = None   # start of the innermost op whose parsing raised

    def parse_optional_operation(self) -> Operation | None:
        start = self._current_token.span.start
        try:
            op = super().parse_optional_operation()
        except Exception:
            if self.failed_at is None:
                self.failed_at = start
            raise
        if op is not None:
            self.positions[id(op)] = start
        return op


def _failing_op(module: ModuleOp, message: str) -> Operation | None:
    for op in module.walk():
        try:
            op.verify_()
        except VerifyException:
            return op
        except Exception:   # a verifier that cannot run on damaged IR: that op
            return op
    for name in re.findall(r"(?:Operation |')([a-z_]\w*\.[\w.]+)", message):   # ops it names
        op = next((op for op in module.walk() if op.name == name), None)
        if op is not None:
            return op
    return None


def position_of(op: Operation | None, positions: dict[int, int]) -> int | None:
    """The recorded offset of ``op`` or of its nearest recorded ancestor."""
    while op is not None and id(op) not in positions:
        op = op.parent_op()
    return None if op is None else positions[id(op)]


def line_col(text: str, at: int) -> tuple[int, int]:
    """1-based line and column of offset ``at`` in ``text``."""
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def at_offset(text: str, at: int, file: str, message: str, line_offset: int = 0) -> str:
    """``file:line:col: error: message`` plus the source line and a caret at offset ``at``."""
    line, col = line_col(text, at)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    source = text[start:end if end >= 0 else len(text)]
    return f"{file}:{line + line_offset}:{col}: error: {message}\n{source}\n{' ' * (col - 1)}^"


def located_message(module: ModuleOp, err: Exception, positions: dict[int, int], text: str,
                    file: str, line_offset: int = 0) -> str | None:
    """``file:line:col: error: <first line of err>`` plus the source line and a caret, or
    ``None`` when no op of ``module`` has a recorded position."""
    message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    at = position_of(_failing_op(module, str(err)), positions)
    return None if at is None else at_offset(text, at, file, message, line_offset)
