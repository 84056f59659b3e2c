"""Errors a user of nki-mlir can see.

Every mistake a user can make in a kernel is reported as an :class:`NKIError`
(or a subclass) that prints ``file:line:col``, the offending source line and a
caret under the column, then says what was wrong and what is allowed -- the
shape of Triton's ``CompilationError``.  Internal compiler failures are
:class:`NKIInternalError` and say so.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in a kernel's source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def source_excerpt(loc: SourceLoc | None) -> str:
    """The source line at ``loc`` followed by a caret under its column ('' if unknown)."""
    if loc is None or loc.line <= 0:
        return ""
    text = linecache.getline(loc.file, loc.line)
    if not text:
        return ""
    text = text.rstrip("\n")
    caret = " " * max(loc.col - 1, 0) + "^"
    return f"{text}\n{caret}"


class NKIError(Exception):
    """A located error in a user's kernel (or ``.mlir`` input).

    Attributes:
        message: what was wrong and what is allowed.
        loc: the :class:`SourceLoc` of the construct, or ``None``.
        category: a short category such as ``"unsupported construct"``.
        code: the NKI Beta 1 error name (``err_...``) when one applies.
        chain: where the helper function holding ``loc`` was called from, innermost
            first, up to the kernel (empty when ``loc`` is in the kernel itself).
    """

    category = "error"
    chain: tuple = ()

    def __init__(self, message: str, loc: SourceLoc | None = None, *,
                 category: str | None = None, code: str | None = None):
        self.message = message
        self.loc = loc
        if category is not None:
            self.category = category
        self.code = code
        super().__init__(self.format())

    def format(self) -> str:
        head = f"{self.loc}: " if self.loc is not None else ""
        code = f" [{self.code}]" if self.code else ""
        out = f"{head}{self.category}: {self.message}{code}"
        excerpt = source_excerpt(self.loc)
        if excerpt:
            out += "\n" + excerpt
        for site in self.chain:
            out += f"\n  called from {site}"
            line = source_excerpt(site).split("\n")[0].strip()
            if line:
                out += f": {line}"
        return out

    def relocate(self, loc: SourceLoc | None = None, chain: tuple = ()) -> "NKIError":
        """Fill in a missing location (and its call chain); the message is re-formatted."""
        if self.loc is None and loc is not None:
            self.loc = loc
        if chain and not self.chain:
            self.chain = tuple(chain)
        self.args = (self.format(),)
        return self

    def __str__(self) -> str:
        return self.format()


class NKISyntaxError(NKIError):
    """A Python construct the NKI compiler does not accept (NKI language guide: kernel code is
    traced Python with the limits that page lists)."""

    category = "unsupported construct"


class NKITypeError(NKIError):
    """A value of the wrong kind, shape, dtype or memory for an API."""

    category = "type error"


class NKIAttributeError(NKITypeError, AttributeError):
    """A kernel reads an attribute a tensor does not have (``t.append``).  Also an
    ``AttributeError``, so ``hasattr``/``getattr(t, name, default)`` in kernel code keep
    Python's behaviour."""


class NKIVerifyError(NKIError):
    """A rule of the NKI programming model (tile shapes, memory, instruction constraints of the
    ``nki.isa`` API pages) was broken by the kernel; raised by an op verifier."""

    category = "invalid kernel"


class NKIAllocationError(NKIError):
    """The kernel's on-chip tensors do not fit (SBUF/PSUM capacity)."""

    category = "out of memory"


class NKIRuntimeError(NKIError):
    """The ISA interpreter found a runtime fault (out-of-bounds access, bad value, ...)."""

    category = "runtime error"


class NKIHazardError(NKIRuntimeError):
    """The interpreter's hazard checks found a scheduling or placement bug: two accesses
    from different engine queues to overlapping bytes with no ordering edge (a race), two
    buffers live at the same time on the same bytes, a read of never-written SBUF/PSUM, or a
    matmul accumulating onto PSUM that a non-matmul instruction initialised.  The message
    names both instructions with their source lines."""

    category = "hazard"


class NKIRangeWarning(UserWarning):
    """A run-time value outside an instruction's documented valid input range.

    Raised (as a warning) by the ISA interpreter, e.g. when ``nisa.activation`` with
    ``op=nl.log`` sees an input outside ``[2^-64, 2^64]`` (NKI ``nki.isa.activation`` page: the
    ScalarE piecewise polynomials give invalid output there, while the interpreter computes
    the exact function).  The warning is reported at the instruction's kernel source line
    (``warning.filename`` / ``warning.lineno``) and its message names the instruction, the
    function, the offending value and the range.  At most one warning per instruction per run.

    To make it fatal: ``warnings.simplefilter("error", NKIRangeWarning)`` or the environment
    variable ``NKI_MLIR_RANGE_CHECK=error``; the run then stops with a located
    :class:`NKIRuntimeError` carrying the same message (``NKI_MLIR_RANGE_CHECK=off``
    disables the check).
    """


class NKIProfileWarning(UserWarning):
    """A profile output worth a word before it is written (e.g. a trace over 100 MiB)."""


class NKIKernelWarning(UserWarning):
    """A located compile-time warning about a kernel that NKI Beta 1 rejects but Beta 2+
    accepts, e.g. an output tensor that is never written (``err_tensor_output_not_written_to``).

    ``warning.filename`` / ``warning.lineno`` are the kernel source line; the message starts
    with ``file:line:col:`` and ends with the NKI error name.  Make it fatal with
    ``warnings.simplefilter("error", NKIKernelWarning)``.
    """


class ArtifactError(Exception):
    """A kernel artifact is damaged, foreign or of an unsupported format version."""


class NKIInternalError(Exception):
    """A bug in nki-mlir itself (never caused by user input)."""
