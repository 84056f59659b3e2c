"""Implementation of the ``nki.compiler.frontend`` / ``nki.compiler.ncc_driver`` stand-ins.

They exist so modules that import the Neuron compiler's Python front end at import time
(nki-library's ``test/utils/kernel_tracer.py``) can be imported under the CPU simulator.
nki-mlir has its own front end and driver (:mod:`nki_mlir.frontend`,
:func:`nki_mlir.compile`).  :meth:`ParserFrontend.compile` is the one entry the suite's
trace-only tests call (``trace_kernel``: "Python -> MLIR via NKIFrontend.compile()"); here
it traces and compiles the kernel with nki-mlir, so a kernel error is raised as nki-mlir's
located :class:`~nki_mlir.errors.NKIError`.  Anything else of the Neuron compiler's
``NKIFrontend`` / ``ParserFrontend`` / ``CompileOptions`` API (NEFF generation) is not
provided: the stand-ins can be constructed, but any other attribute raises
``NotImplementedError``.
"""
from __future__ import annotations

from typing import Any


class _NotProvided:
    """Base of the stand-ins.

    Constructing one works (``test/utils/kernel_tracer.py`` builds a ``ParserFrontend()``
    as a default argument at import time); any attribute or method use of the instance
    raises :class:`NotImplementedError`.
    """

    _what = "this Neuron compiler class"

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def __getattr__(self, name: str):
        raise NotImplementedError(
            f"{self._what}.{name}: {self._what} is part of the Neuron compiler (neuronxcc), "
            f"which nki-mlir's nki_cpu_simulator shim does not provide; use simulation mode "
            f"(--test-mode simulation), or nki_mlir.compile(kernel, *arrays) for nki-mlir's "
            f"own compiler")

    def __call__(self, *args: Any, **kwargs: Any):
        return self.__getattr__("__call__")


class NKIFrontend(_NotProvided):
    """Stand-in for ``nki.compiler.frontend.NKIFrontend`` (using an instance raises NotImplementedError)."""

    _what = "nki.compiler.frontend.NKIFrontend"


class ParserFrontend(_NotProvided):
    """Stand-in for ``nki.compiler.frontend.ParserFrontend``: :meth:`compile` traces and
    compiles with nki-mlir; any other attribute raises NotImplementedError."""

    _what = "nki.compiler.frontend.ParserFrontend"

    def compile(self, kernel: Any, inputs: dict | None = None, *, target: str | None = None,
                lnc: int | None = 1, artifacts_dir: str | None = None, **_options: Any
                ) -> "FrontendResult":
        """Trace and compile ``kernel`` for ``inputs`` (parameter name -> NumPy array or
        value) with nki-mlir, on ``target`` (``"trn1"`` / ``"trn2"`` / ``"trn3"`` /
        ``"trn3_a0"``) with LNC degree ``lnc`` (1 or 2).  The other options of the Neuron
        compiler's front end (``dump_python_ast``, ``output_names``) do not change what is
        compiled and are accepted as given.  Writes each program instance's artifact
        (nki-mlir's ``manifest.json`` and IR files) under ``artifacts_dir/nki_mlir/`` if
        given.

        Returns:
            A :class:`FrontendResult` (``.compiled``: nki-mlir's CompiledKernels;
            ``.module``: the first one's ``nki`` IR, printable like an MLIR module).

        Raises:
            NKIError: any error of the kernel, located at its source line.
        """
        from nki_mlir.kernel import Kernel
        from nki_mlir.entry import unwrap

        k = unwrap(kernel)
        if not isinstance(k, Kernel):
            k = Kernel(k)
        n = 1 if lnc is None else int(lnc)
        runnable = k if n == 1 else k[n]
        tgt = _TARGETS.get(str(target), str(target)) if target is not None else None
        compiled = runnable.compile_with((), dict(inputs or {}), **({"target": tgt} if tgt else {}))
        if n != 1:
            compiled = compiled[0]
        compiled = compiled if isinstance(compiled, list) else [compiled]
        if artifacts_dir:
            from pathlib import Path
            base = Path(artifacts_dir) / "nki_mlir"
            for i, ck in enumerate(compiled):
                ck.save(base / f"program_{i}" if len(compiled) > 1 else base)
        return FrontendResult(compiled)


#: platform names of the nki-library harness -> nki-mlir targets
_TARGETS = {"trn3_a0": "trn3"}


class _Operation:
    def __init__(self, text: str):
        self._text = text

    def print(self, file: Any = None, **_flags: Any) -> None:
        """Write the IR text to ``file`` (stdout if None); MLIR printing flags are accepted."""
        import sys
        (file or sys.stdout).write(self._text)


class _Module:
    """The ``nki`` IR of a compile, with the ``module.operation.print(file=...)`` spelling
    of the MLIR Python bindings that nki-library's tracer writes ``module.mlir`` with."""

    def __init__(self, text: str):
        self.operation = _Operation(text)

    def __str__(self) -> str:
        return self.operation._text


class FrontendResult:
    """What :meth:`ParserFrontend.compile` returns.

    Attributes:
        compiled: nki-mlir's :class:`~nki_mlir.compiler.CompiledKernel` per program instance.
        module: the first instance's ``nki`` IR (``str(module)``, ``module.operation.print``).
    """

    def __init__(self, compiled: list):
        self.compiled = compiled
        self.module = _Module(compiled[0].ir("nki"))


class CompileOptions(_NotProvided):
    """Stand-in for ``nki.compiler.ncc_driver.CompileOptions`` (using an instance raises NotImplementedError)."""

    _what = "nki.compiler.ncc_driver.CompileOptions"
