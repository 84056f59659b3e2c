"""Kernel outputs written only in part: a located warning (or error) naming the region never written.

A kernel output allocated with ``nl.ndarray(..., buffer=nl.shared_hbm)`` starts uninitialised
(NKI ``nl.ndarray`` API page: the tensor is not initialised; an HBM tensor cannot be created
with an initial value).  Elements that
no instruction writes come back with whatever the memory held -- on the ISA interpreter the
never-written sentinel (NaN for float dtypes, 4 for integer dtypes).  :func:`check_outputs`
runs on the ``nki`` dialect module of a kernel (after the frontend, before the pipeline): for
every returned tensor whose storage is an ``nki.ndarray``, it computes the exact written region
(:func:`.written_region.written_region`, an integer set over the output's indices, loops and
masks included) and compares it with the output's full box.  When part of it is never written:

- mode ``warn`` (the default): a :class:`~nki_mlir.errors.NKIKernelWarning` at the output's
  allocation (``file:line``), naming the output and the region, e.g.
  ``rows 384..511 of out[512, 512] are never written (out[384:512, :], 65536 of 262144 elements)``;
- mode ``error``: the same message as a located :class:`~nki_mlir.errors.NKIError`
  (category ``invalid kernel``; an output never written at all is then an error too);
- mode ``off``: no check.

The mode is the compile option ``output_check`` (``@nki.jit(output_check="error")``,
``nki.compile(k, *args, output_check="error")``), else the environment variable
``NKI_MLIR_OUTPUT_CHECK``, else ``warn``.

Not checked (no false positives): outputs whose region cannot be decided (the written region is
over-approximated, e.g. an indirect DMA writes the whole output), tensors created with contents
(``nl.shared_constant``), parameters written in place (their unwritten part keeps the caller's data),
and one program instance of a launch grid (``kernel[g](...)``: other instances write the rest).
An output nothing writes is reported by the frontend's check (``err_tensor_output_not_written_to``)
and not a second time here in mode ``warn``.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import Operation, OpResult

from .. import dtypes
from ..diagnostics import loc_of
from ..errors import NKIError, NKIKernelWarning
from .affine import trip_count
from ..dialects.effects import base_buffer
from .written_region import full_region, written_region, writes_of

MODES = ("warn", "error", "off")
ENV = "NKI_MLIR_OUTPUT_CHECK"
#: the largest bounding box of a region (elements) whose element count a message gives
MAX_COUNT = 1 << 22
#: the longest isl description of a region printed in a message
MAX_SET_TEXT = 240


def resolve_mode(option: str | None = None) -> str:
    """The check's mode: the ``output_check`` option, else ``$NKI_MLIR_OUTPUT_CHECK``, else warn.

    Raises:
        NKIError: (``bad option``) a value outside ``warn`` / ``error`` / ``off``.
    """
    mode, where = (option, "output_check") if option is not None else (os.environ.get(ENV) or "warn", ENV)
    if mode not in MODES:
        raise NKIError(f"{where}={mode!r}: expected one of {', '.join(map(repr, MODES))}",
                       category="bad option")
    return mode


@dataclass(frozen=True)
class Unwritten:
    """An output with a region never written: output number, name, shape, dtype, the region
    (an ``islpy.Set`` of indices) and whether nothing of it is written."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: object
    region: object
    nothing: bool
    alloc: Operation


def unwritten_outputs(module: ModuleOp, skip_never_written: bool = False) -> list[Unwritten]:
    """The outputs of the kernel in ``module`` (an ``nki`` dialect module from the frontend)
    with a region that no instruction writes, decided exactly (module docstring);
    ``skip_never_written`` leaves out outputs with no write that can run."""
    fn = next((op for op in module.ops if op.name == "func.func"), None)
    if fn is None or not fn.body.blocks:
        return []
    ret = fn.body.blocks[0].last_op
    if ret is None or ret.name != "func.return":
        return []
    names = fn.attributes.get("nki.output_names")
    names = [a.data for a in names.data] if isinstance(names, ArrayAttr) else []
    writes = None
    found = []
    for i, value in enumerate(ret.operands):
        base = base_buffer(value)
        if not (isinstance(base, OpResult) and base.op.name == "nki.ndarray"):
            continue                        # a parameter, or a tensor created with contents
        if writes is None:
            writes = writes_of(fn.body.walk())
        mine = writes.get(base, [])
        if skip_never_written and not any(_may_run(op) for op, _ in mine):
            continue
        written = written_region(base, mine)
        if written is None:
            continue                        # undecided: say nothing
        shape = tuple(base.type.get_shape())
        unwritten = full_region(shape).subtract(written).coalesce()
        if not unwritten.is_empty():
            found.append(Unwritten(i, names[i] if i < len(names) else f"output_{i}", shape,
                                   dtypes.from_mlir(base.type.element_type), unwritten,
                                   written.is_empty(), base.op))
    return found


def check_outputs(module: ModuleOp, mode: str = "warn") -> None:
    """Warn (mode ``warn``) or raise (mode ``error``) for every output of the kernel in
    ``module`` (an ``nki`` dialect module from the frontend) that is only partly written.

    Raises:
        NKIError: mode ``error`` and an output with a region never written; located at the
            output's allocation.
    """
    if mode == "off":
        return
    # in mode warn, an output never written was reported by the frontend's check
    for u in unwritten_outputs(module, skip_never_written=mode == "warn"):
        msg = _message(u.index, u.name, u.shape, u.dtype, u.region, u.nothing)
        loc = loc_of(u.alloc)
        if mode == "error":
            raise NKIError(msg, loc, category="invalid kernel")
        if loc is None:
            warnings.warn(msg, NKIKernelWarning, stacklevel=2)
        else:
            warnings.warn_explicit(f"{loc}: warning: {msg}", NKIKernelWarning, loc.file, loc.line)


def _may_run(op: Operation) -> bool:
    """``op`` is not inside an ``scf.for`` with a static trip count of 0."""
    node = op.parent_op()
    while node is not None and node.name != "func.func":
        if node.name == "scf.for" and trip_count(node) == 0:
            return False
        node = node.parent_op()
    return True


def _message(i: int, name: str, shape: tuple[int, ...], dtype, unwritten, nothing: bool) -> str:
    what = f"kernel output {i} ('{name}')"
    full = f"{name}[{', '.join(map(str, shape))}]"
    sentinel = "NaN" if dtypes.is_float(dtype) else "4"
    tail = (f"; the kernel returns them uninitialised (the ISA interpreter fills them with "
            f"{sentinel}); every element of a returned tensor must be written")
    if nothing:
        return f"{what} is never written: no instruction that runs writes an element of {full}{tail}"
    return f"{what} is only partly written: {describe_region(name, shape, unwritten)}{tail}"


def describe_region(name: str, shape: tuple[int, ...], region) -> str:
    """``region`` (a non-empty ``islpy.Set`` in the index space of ``name[shape]``) in index terms:
    ``rows 120..127 of out[128, 512] are never written (out[120:128, :], 4096 of 65536
    elements)``, or for a region that is not a box its element count, its bounding box and
    its constraints (``{ out[i0, i1] : i1 > i0 }``)."""
    import islpy as isl
    full = f"{name}[{', '.join(map(str, shape))}]"
    lo = [region.dim_min_val(j).to_python() for j in range(len(shape))]
    hi = [region.dim_max_val(j).to_python() for j in range(len(shape))]
    box = ", ".join(":" if (a, b + 1) == (0, n) else f"{a}:{b + 1}" for a, b, n in zip(lo, hi, shape))
    is_box = region.is_box()
    bound = prod(b - a + 1 for a, b in zip(lo, hi))
    # isl counts a set that is not a box by enumerating it: only small ones
    count = bound if is_box else region.count_val().to_python() if bound <= MAX_COUNT else None
    elements = f"{count} of {prod(shape)} elements" if count is not None else "some elements"
    if is_box:
        partial = [j for j, (a, b, n) in enumerate(zip(lo, hi, shape)) if (a, b + 1) != (0, n)]
        if len(partial) == 1:
            j = partial[0]
            one = lo[j] == hi[j]
            span = f"{lo[j]}" if one else f"{lo[j]}..{hi[j]}"
            if len(shape) == 2:
                words = ("row" if j == 0 else "column") + ("" if one else "s") + f" {span}"
            elif len(shape) == 1:
                words = ("element" if one else "elements") + f" {span}"
            else:
                words = ("index" if one else "indices") + f" {span} of dim {j}"
            verb = "is" if one else "are"
            return (f"{words} of {full} {verb} never written "
                    f"({name}[{box}], {elements})")
        return f"{name}[{box}] of {full} is never written ({elements})"
    named = region.gist(full_region(shape))
    for j in range(len(shape)):
        named = named.set_dim_name(isl.dim_type.set, j, f"i{j}")
    text = str(named).replace("{ [", f"{{ {name}[", 1)
    where = f": {text}" if len(text) <= MAX_SET_TEXT else ""
    return f"{elements} of {full} are never written, within {name}[{box}]{where}"

