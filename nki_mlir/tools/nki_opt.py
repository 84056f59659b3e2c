"""``nki-opt``: the mlir-opt style driver for the ``nki`` and ``nisa`` dialects.

An :class:`xdsl.xdsl_opt_main.xDSLOptMain` that also knows our dialects
(:func:`nki_mlir.dialects.get_all_dialects`) and passes
(:func:`nki_mlir.passes.get_all_passes`), next to xDSL's own (builtin, func, arith, scf,
memref, ...; canonicalize, cse, ...).  Everything else -- ``-p``, ``--split-input-file``,
``--print-op-generic``, ``--verify-diagnostics``, ``-o`` -- is xDSL's::

    nki-opt kernel.mlir -p 'nisa-allocate{target=trn2},nisa-schedule'

A user error raised by a pass (:class:`~nki_mlir.errors.NKIError`) is printed as its
formatted message (``file:line:col: category: message`` plus the source line) on stderr
with exit status 1, never as a Python traceback.  ``--print-deps`` prints the dependence
edges of every function after the passes (``// deps @f:`` then one ``//   %7 dma_copy
(k.py:28) -> %9 matmul (k.py:30)  RAW lhs  [same iteration]`` line per edge).  So are parse errors and verifier
failures.  With ``--verify-diagnostics`` (``--parsing-diagnostics`` for parse errors)
the message goes to stdout instead, the exit status is 0 and ``--split-input-file``
goes on with the next chunk -- xdsl-opt's convention, which lets one lit test check
several diagnostics; NKIErrors raised by passes follow it too.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from .. import instructions  # noqa: F401  (the ops of the instruction definitions)
from ..dialects import get_all_dialects
from ..dialects.ssa_dominance import defined_after, first_violation
from ..errors import NKIError, SourceLoc
from ..passes import get_all_passes
from .opt_locations import PositionParser, at_offset, line_col, located_message, position_of


def _nki_mlir_version() -> str:
    """The installed package version, else the source tree's ``pyproject.toml`` version."""
    try:
        return metadata.version("nki-mlir")
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        import tomllib
        return tomllib.loads(pyproject.read_text())["project"]["version"]
    except (OSError, KeyError, ValueError):
        return "unknown"



#: xDSL's parser's message for SSA names still unresolved when their region ends
_UNDEFINED = re.compile(r"values used but not defined: \[(%[\w$.-]+)")


def _first_use(text: str, name: str) -> int | None:
    """Offset of the first use of SSA value ``name`` in ``text``: an occurrence that is not
    a definition (``%x =``, ``%x, %y =``, ``%x:`` of a block argument)."""
    for m in re.finditer(re.escape(name) + r"(?![\w$.-])", text):
        if not re.match(r"\s*(=|:|,\s*%[\w$.-]+\s*[=,])", text[m.end():]):
            return m.start()
    return None


class NkiOptMain(xDSLOptMain):
    """xdsl-opt plus the nki/nisa dialects and the nki-mlir passes."""

    version_format = f"nki-opt (nki-mlir {_nki_mlir_version()}, xdsl {{xdsl_version}})"

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for pass_cls in get_all_passes():
            self.register_pass(pass_cls.name, lambda p=pass_cls: p)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all", action="store_true",
            help="print the module after every pass on stderr (MLIR's option)")
        arg_parser.add_argument(
            "--print-ir-after", action="append", metavar="PASS",
            help="print the module after pass PASS on stderr (repeatable)")
        arg_parser.add_argument(
            "--print-deps", action="store_true",
            help="after the passes, print every memory dependence edge between nisa "
                 "instructions (passes/dependence.py), one per line, before the IR")

    def register_all_frontends(self) -> None:
        """The ``.mlir`` frontend with op positions recorded (:mod:`.opt_locations`)."""
        super().register_all_frontends()
        self._positions: dict[int, int] = {}
        self._text, self._line_offset = "", 0

        def parse_mlir(io) -> ModuleOp:
            data = io.read()
            self._text = data.decode(errors="replace") if isinstance(data, bytes) else data
            parser = PositionParser(self.ctx, data, self.get_input_name(), positions=self._positions)
            try:
                module = parser.parse_module(not self.args.no_implicit_module)
            except ParseError as err:
                undefined = _UNDEFINED.search(str(err))
                use = _first_use(self._text, undefined.group(1)) if undefined else None
                if use is None or self.args.verify_diagnostics:
                    raise
                raise DiagnosticException(at_offset(
                    self._text, use, self.get_input_name(),
                    f"use of undefined value '{undefined.group(1)}' (no definition of it in a "
                    f"region that encloses this use)", self._line_offset)) from None
            except (VerifyException, ValueError, OverflowError) as err:
                # an op's parser verified it (e.g. terminators), or xDSL rejected a value
                # while building an attribute (an integer out of range) instead of raising
                # a ParseError: a diagnostic at the op all the same
                if parser.failed_at is None or self.args.verify_diagnostics:
                    raise
                raise DiagnosticException(at_offset(self._text, parser.failed_at, self.get_input_name(),
                                                    str(err).strip().splitlines()[0],
                                                    self._line_offset)) from None
            if not self.args.disable_verify:
                self._check_dominance(module)
            return module

        self.available_frontends["mlir"] = parse_mlir

    def _check_dominance(self, module: ModuleOp) -> None:
        """A use of a value before its definition is a diagnostic at the use (MLIR's verifier
        rule; xDSL's parser accepts the forward reference)."""
        found = first_violation(module)
        if found is None:
            return
        op, index = found
        why = ("it is defined after it" if defined_after(op.operands[index], op)
               else "it is defined in a region that does not enclose it")
        message = f"operand #{index} of '{op.name}' does not dominate this use ({why})"
        at = position_of(op, self._positions)
        if at is None:
            raise DiagnosticException(message)
        raise DiagnosticException(at_offset(self._text, at, self.get_input_name(), message,
                                            self._line_offset))

    def parse_chunk(self, chunk, file_extension: str, start_offset: int = 0):
        self._positions.clear()
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except NKIError as err:
            if err.loc is None and getattr(err, "op", None) is None and err.category == "bad option":
                sys.stdout.flush()
                print(pipeline_error(self.args.passes, err), file=sys.stderr)
                sys.exit(1)
            at = position_of(getattr(err, "op", None), self._positions) if err.loc is None else None
            if at is not None:   # an op without a source loc: its position in the input
                line, col = line_col(self._text, at)
                err.relocate(SourceLoc(self.get_input_name(), line + self._line_offset, col))
            if self.args.verify_diagnostics:
                raise DiagnosticException(str(err)) from err
            raise
        except DiagnosticException as err:
            if self.args.verify_diagnostics:
                raise
            located = located_message(prog, err, self._positions, self._text,
                                      self.get_input_name(), self._line_offset)
            if located is None:
                raise
            raise DiagnosticException(located) from None
        if self.args.print_deps:
            _print_deps(prog)

    def setup_pipeline(self) -> None:
        """The pipeline from ``-p`` (xDSL's spec syntax), with a callback between passes that
        verifies (unless ``--disable-verify``) and writes ``--time-passes`` timings and
        ``--print-ir-after-all`` / ``--print-ir-after=PASS`` dumps to **stderr**, so stdout
        holds only the output module (``nki-opt F -p P --time-passes | nki-opt`` parses).
        A bad pass name or option is a diagnostic pointing into the ``-p`` string (exit
        status 1), not a traceback."""
        args = self.args
        after = set(args.print_ir_after or ())
        clock = {"start": time.perf_counter()}

        def between(prev, module: ModuleOp, _next) -> None:
            now = time.perf_counter()
            if prev is not None and args.time_passes:
                print(f"Pass {prev.name} took {now - clock['start']:.6f} s", file=sys.stderr)
            if not args.disable_verify:
                module.verify()
            if prev is not None and (args.print_ir_after_all or prev.name in after):
                print(f"// -----// IR Dump After {prev.name} //----- //", file=sys.stderr)
                Printer(stream=sys.stderr).print_op(module)
                print(file=sys.stderr)
            clock["start"] = time.perf_counter()

        try:
            self.pipeline = PassPipeline.parse_spec(self.available_passes, args.passes, between)
        except (ValueError, ParseError, NKIError, ArgSpecParseError) as err:
            sys.stdout.flush()
            print(pipeline_error(self.args.passes, err), file=sys.stderr)
            sys.exit(1)

    def run(self) -> None:
        try:
            super().run()
        except (NKIError, ParseError, DiagnosticException) as err:
            sys.stdout.flush()
            print(_message(err), file=sys.stderr)
            sys.exit(1)
        except Exception as err:   # a bug of ours: said so, the traceback on request
            sys.stdout.flush()
            print(internal_error(err), file=sys.stderr)
            sys.exit(2)


def pipeline_error(spec: str, err: Exception) -> str:
    """``<pipeline>:1:COL: error: MESSAGE`` with the ``-p`` string and a caret under the
    pass the error names (column 1 when none can be told)."""
    text = str(err).strip().splitlines()
    msg = next((ln.strip() for ln in reversed(text) if ln.strip() and set(ln.strip()) != {"^"}), str(err))
    col = 0
    import re
    names = re.findall(r"'([\w-]+)'|\"([\w-]+)\"|^(?:\w[\w ]*: )?([a-z][\w-]+):", str(err))
    for name in (a or b or c for a, b, c in names):
        at = spec.find(name)
        if at >= 0:
            col = at
            break
    return (f"<pipeline>:1:{col + 1}: error: bad pass pipeline: {msg}\n"
            f"  -p '{spec}'\n  {' ' * (col + 4)}^")


def internal_error(err: Exception) -> str:
    """The message of an unexpected exception: an internal compiler error, with the
    traceback when ``NKI_MLIR_TRACEBACK=1``."""
    import os
    import traceback
    head = (f"nki-opt: internal compiler error: {type(err).__name__}: {err} (please report this"
            f"{'' if os.environ.get('NKI_MLIR_TRACEBACK') else '; NKI_MLIR_TRACEBACK=1 shows the traceback'})")
    if os.environ.get("NKI_MLIR_TRACEBACK"):
        return "".join(traceback.format_exception(err)) + head
    return head


def _print_deps(module: ModuleOp) -> None:
    """``// deps @f:`` then one line per edge (:func:`~nki_mlir.passes.dependence.describe`)."""
    from xdsl.dialects.func import FuncOp

    from ..passes.dependence_graph import format_deps
    for func in module.walk():
        if isinstance(func, FuncOp):
            print(f"// deps @{func.sym_name.data}:")
            for line in format_deps(func):
                print(f"//   {line}")


def _message(err: Exception) -> str:
    """The formatted message of an error, with the notes xDSL attaches (the failing IR)."""
    return "\n".join([str(err), *getattr(err, "__notes__", ())])


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``nki-opt`` console script (``argv`` defaults to ``sys.argv[1:]``)."""
    NkiOptMain(description="nki-mlir modular optimizer driver (xDSL based)", args=argv).run()


if __name__ == "__main__":
    main()
