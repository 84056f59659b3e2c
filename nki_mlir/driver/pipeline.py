"""The pass pipeline of a compile, and the IR text in and out of it.

:func:`run_pipeline` runs the registry's default pipeline (:func:`nki_mlir.passes.default_pipeline`,
``nki-legalize -> lower-nki-to-nisa -> nisa-allocate -> nisa-schedule``) on the frontend's
``nki`` module, checking after each pass what may remain at that stage
(:func:`nki_mlir.passes.check_stage`); :func:`print_module` / :func:`parse_module` turn a
module into text and back; :func:`ir_dumper` writes the IR after every stage
(``NKI_MLIR_DUMP_IR``).
"""
from __future__ import annotations

import os
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at
from ..errors import NKIVerifyError
from ..options import verify_each_pass
from ..passes import DEFAULT_PIPELINE, check_stage, default_pipeline

#: steps of a compile's progress bar: every pass of the pipeline, then printing the IR
PROGRESS_STEPS = len(DEFAULT_PIPELINE) + 1


def print_module(module: ModuleOp, debuginfo: bool = True) -> str:
    """The module's text as xDSL's ``Printer`` prints it (built by :class:`MemoPrinter`)."""
    import io

    from ..dialects.memo_printer import MemoPrinter
    buf = io.StringIO()
    MemoPrinter(stream=buf, print_debuginfo=debuginfo).print_op(module)
    return buf.getvalue() + "\n"


def parse_module(text: str) -> ModuleOp:
    """The verified module of ``text`` (MLIR generic or custom syntax of our dialects).

    Raises:
        ParseError, VerifyException: text that does not parse or verify.
    """
    from xdsl.parser import Parser     # (a cache hit decodes the compact form: no parser)

    from ..dialects import make_context
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _located(module: ModuleOp, message: str) -> NKIVerifyError:
    """A pass failure as an error at the source line of the first op whose own verifier
    fails (ops the passes create keep their source op's location); unlocated if none does."""
    for op in module.walk():
        try:
            op.verify_()
        except VerifyException:
            return error_at(op, message, NKIVerifyError)  # type: ignore[return-value]
    return NKIVerifyError(message)


def ir_dumper(kernel: str, key: str):
    """``NKI_MLIR_DUMP_IR=DIR``: a function ``dump(n, stage, text)`` writing
    ``DIR/<kernel>-<key16>/NN-<stage>.mlir`` (``00-frontend.nki.mlir``, ``01-nki-legalize.mlir``,
    ...), the IR after the frontend and after every pass; ``None`` when the variable is unset."""
    root = os.environ.get("NKI_MLIR_DUMP_IR")
    if not root:
        return None
    folder = Path(root) / f"{kernel}-{key[:16]}"
    folder.mkdir(parents=True, exist_ok=True)

    def dump(n: int, stage: str, text: str) -> None:
        (folder / f"{n:02d}-{stage}.mlir").write_text(text)
    return dump


#: the default pipeline's passes a program-order run needs (:data:`PLACED`) and the rest
#: (:data:`SCHEDULED`); a compile's *stage* (:func:`nki_mlir.driver.compile.compile_kernel`)
PLACED = tuple(name for name, _ in DEFAULT_PIPELINE if name != "nisa-schedule")
SCHEDULED = ("nisa-schedule",)


def run_pipeline(module: ModuleOp, target: str, schedule: str = "list", dump=None,
                 progress=None, spill: bool = True, only: tuple[str, ...] | None = None) -> list[str]:
    """Run the default pipeline in place; returns the pass names run (for the manifest).

    ``only``: run just these passes of the pipeline (in its order; e.g. :data:`PLACED`, then
    later :data:`SCHEDULED` on the same module); the dump numbers stay the pipeline's.
    The module verifier runs on the module after the last pass run (after every pass with
    :func:`~nki_mlir.options.verify_each_pass`); a failure is located at the first op whose
    verifier fails.  ``dump`` (see :func:`ir_dumper`) receives the IR after every pass;
    ``progress`` (a :func:`nki_mlir.progress.bar`) advances by one per pass.

    Raises:
        NKIError: a pass's diagnostic (located at the kernel line it concerns);
            NKIVerifyError: the module verifier failed after a pass.
    """
    from ..dialects import make_context
    ctx = make_context()
    passes = [(i, p) for i, p in enumerate(default_pipeline(target=target, schedule=schedule,
                                                             spill=spill))
              if only is None or p.name in only]
    each = verify_each_pass()
    last = passes[-1][0] if passes else -1
    for i, p in passes:
        if progress is not None:
            progress.set_postfix_str(p.name)
        try:
            p.apply(ctx, module)
            if each or i == last:
                module.verify()
        except VerifyException as exc:
            raise _located(module, f"{p.name}: {exc}") from None
        check_stage(p.name, module)
        if dump is not None:
            dump(i + 1, p.name, print_module(module))
        if progress is not None:
            progress.update()
    return [p.name for _, p in passes]
