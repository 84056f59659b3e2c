"""Local fixes to upstream xDSL 0.74 behaviour that nki-mlir depends on.

Each fix is the smallest override that makes xDSL's output parse back; remove it when the
pinned xDSL version no longer needs it.
"""
from __future__ import annotations

from xdsl.dialects import scf
from xdsl.printer import Printer


def _print_scf_while(self: scf.WhileOp, printer: Printer) -> None:
    """``scf.while`` custom syntax without the stray location.

    xDSL 0.74's ``WhileOp.print`` calls ``Printer.print_operation_type``, which with debug
    info on also prints ``loc(...)`` right after the function type (then ``print_op`` prints
    it again after the op), so ``scf.while ... : (index) -> index loc(...) {`` cannot be
    parsed back.  Runtime ``while`` loops live in artifacts printed with locations, so this
    module prints the type with ``print_function_type`` instead (same text otherwise).
    """
    printer.print_string(" (")
    printer.print_list(zip(self.before_region.block.args, self.arguments, strict=True),
                       lambda pair: self._print_pair(printer, pair))
    printer.print_string(") : ")
    printer.print_function_type(self.operand_types, self.result_types)
    printer.print_string(" ")
    printer.print_region(self.before_region, print_entry_block_args=False)
    printer.print_string(" do ")
    printer.print_region(self.after_region)
    if self.attributes:
        printer.print_op_attributes(self.attributes, print_keyword=True)


scf.WhileOp.print = _print_scf_while  # type: ignore[method-assign]


def _linear_string_literal_regex() -> None:
    """xDSL 0.74's lexer matches a string literal with ``"(?:[^"...]+|\\\\...)*"``: a
    quantified group inside a quantifier, which backtracks exponentially on an unterminated
    string (``{name = "b>} : ...`` in a damaged file hangs the parser for minutes, found by
    our ``nki-opt`` fuzzer).  The same language without the inner ``+`` matches in linear
    time, so a bad file gets its "End of file reached before closing string literal" error
    at once."""
    import re

    from xdsl.utils.mlir_lexer import MLIRLexer
    MLIRLexer._unescaped_characters_regex = re.compile(
        r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


_linear_string_literal_regex()
