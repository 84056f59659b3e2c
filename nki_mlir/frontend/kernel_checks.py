"""Kernel-level checks: ``nki.typing`` annotations, parameter mutability, unwritten outputs.

Called by :func:`~nki_mlir.frontend.build_module`:

- :func:`check_arguments` (before the body is compiled): each kernel parameter annotated
  with an ``nt`` annotation (:mod:`nki_mlir.typing`) is checked against its argument; a
  shape mismatch is a located :class:`~nki_mlir.errors.NKITypeError` at the parameter with
  code ``err_annotation_shape_mismatch`` (Beta 1 ``nki.errors`` page); a dtype mismatch, or
  a compile-time constant passed to a tensor annotation, is an ``NKITypeError`` too.
  (``name: nt.tensor[...] = value`` in a kernel body: ``beta1/trace.check_annotation``.)
- :func:`check_writes` (after the body is compiled, on the ``nki`` dialect function): a
  pass-like walk that finds, for every base buffer (a kernel parameter or an allocation),
  the instructions writing it -- operands in the roles of ``instruction.WRITE_ROLES``
  (``dst``, ``reduce_res``, ...; ``nl.store``'s and ``dma_copy``'s ``dst`` included),
  followed back through ``memref.subview`` / ``reinterpret_cast`` / ``view_dtype`` chains
  (``dialects/effects.base_buffer``).  Writes inside a loop whose static trip count is 0 do
  not count.

  * Beta 1 kernels (the module imported ``neuronxcc.nki``) that return their outputs:
    writing a parameter not annotated ``nt.mutable_tensor`` is
    ``err_cannot_update_immutable_parameter`` (at the writing line); a written mutable
    parameter that is not returned is ``err_mutable_parameter_not_returned`` (at the
    ``return``).  A Beta 1 kernel that returns nothing is in the legacy output-as-argument
    style (the ``err_tensor_output_not_written_to`` example of the Beta 1 error page) and
    may write its parameters.  Beta 2+ kernels may write parameters (output-as-argument).
  * A returned tensor that nothing writes, or a kernel that returns nothing and writes no
    parameter, is ``err_tensor_output_not_written_to``: a located ``NKIError`` in Beta 1,
    a located :class:`~nki_mlir.errors.NKIKernelWarning` in Beta 2+.  A tensor created
    with contents (``nl.shared_constant``, ``nl.zeros``, ...) counts as written.  Not checked
    for one program instance of a launch grid (``kernel[g](...)``): the kernel is specialised
    per instance and another instance may write the output.

Semantics: NKI language guide (nki/get-started/nki-language-guide) ("Outputs (Beta 1)") and 6 (items 36, 37).
"""
from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation

from .. import dtypes
from ..diagnostics import loc_of
from ..errors import NKIError, NKIKernelWarning, NKITypeError, SourceLoc
from ..dialects.effects import base_buffer, has_write_roles, written
from .annotations import ScalarAnnotation, TensorAnnotation, annotation_of

#: op names that create a tensor without contents (every other creating op initialises it)
_UNINITIALISED = ("nki.ndarray",)


# ------------------------------------------------------------------------ annotations


def param_annotations(fn: Any, src) -> dict[str, tuple[Any, ast.arg]]:
    """``{parameter: (nt annotation, its ast.arg)}`` for the parameters of ``fn`` annotated
    with an ``nt`` annotation (string annotations are evaluated in the function's globals;
    annotations that are not ``nt`` objects are ignored)."""
    raw = getattr(fn, "__annotations__", {}) or {}
    a = src.node.args
    out: dict[str, tuple[Any, ast.arg]] = {}
    for arg in a.posonlyargs + a.args:
        if arg.annotation is None:
            continue
        value = raw.get(arg.arg)
        if isinstance(value, str):
            try:
                value = eval(value, {**src.globals, **src.closure})  # noqa: S307 (the user's own annotation)
            except Exception:   # the user's own expression (any annotation, e.g. "np.ndarray")
                value = None    # failing to evaluate it: not an nt annotation, so not checked
        ann = annotation_of(value)
        if ann is not None:
            out[arg.arg] = (ann, arg)
    return out


def check_arguments(b, src, fn: Any, specs) -> dict[str, Any]:
    """Check annotated parameters against the call's arguments; returns ``{name: annotation}``.

    Also records on the builder ``b`` whether the kernel is marked ``@ncc.force_auto_alloc``.

    Raises:
        NKITypeError: shape mismatch (``err_annotation_shape_mismatch``), dtype mismatch, or
            a non-tensor argument for a tensor annotation; located at the parameter.
    """
    from .beta1.ncc_marks import FORCE_AUTO_ALLOC_ATTR
    b.force_auto_alloc = bool(getattr(fn, FORCE_AUTO_ALLOC_ATTR, False))
    anns = param_annotations(fn, src)
    by_name = {s.name: s for s in specs}
    for name, (ann, node) in anns.items():
        s = by_name.get(name)
        if s is None or not isinstance(ann, TensorAnnotation):
            continue
        loc = src.loc(node)
        if s.kind != "tensor":
            raise NKITypeError(f"kernel parameter '{name}' is annotated {ann!r} but its argument is "
                               f"the compile-time constant {s.value!r}; pass a NumPy array", loc)
        if ann.shape is not None and tuple(s.shape) != tuple(ann.shape):
            raise NKITypeError(f"shape of '{name}{list(s.shape)}' does not match the expected shape "
                               f"of {list(ann.shape)} (parameter annotation {ann!r})", loc,
                               code="err_annotation_shape_mismatch")
        if ann.dtype is not None and s.dtype != dtypes.name_of(ann.dtype):
            raise NKITypeError(f"dtype of '{name}' is {s.dtype} but its annotation {ann!r} expects "
                               f"{dtypes.name_of(ann.dtype)}", loc)
    return {name: ann for name, (ann, _) in anns.items()}


# ----------------------------------------------------------------------------- writes


def written_operands(op: Operation) -> Iterator[SSAValue]:
    """The memref operands ``op`` writes (its operands in ``WRITE_ROLES``): the values of
    the write accesses of :func:`~nki_mlir.dialects.effects.accesses`, read through the
    write roles only (:func:`~nki_mlir.dialects.effects.written`)."""
    if isinstance(op, IRDLOperation):
        yield from written(op)


def _const_int(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        attr = v.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def in_dead_loop(op: Operation) -> bool:
    """Whether ``op`` sits in an ``scf.for`` whose static trip count is 0."""
    node = op.parent_op()
    while node is not None and node.name != "func.func":
        if isinstance(node, scf.ForOp):
            lb, ub = _const_int(node.lb), _const_int(node.ub)
            if lb is not None and ub is not None and ub <= lb:
                return True
        node = node.parent_op()
    return False


def find_writes(block: Block) -> tuple[dict[SSAValue, Operation], dict[SSAValue, Operation]]:
    """``(live, dead)``: base buffer -> the first op writing it (in program order), for
    writes that can run and for writes only inside zero-trip loops.

    (An op of a class without write roles -- a view, a constant, most of a kernel's ops --
    is passed over after one look per class; whether a block is in a zero-trip loop is
    decided once per block.)"""
    live: dict[SSAValue, Operation] = {}
    dead: dict[SSAValue, Operation] = {}
    writes: dict[type, bool] = {}
    dead_block: dict[int, bool] = {}
    for op in block.walk():
        cls = op.__class__
        w = writes.get(cls)
        if w is None:
            w = writes[cls] = issubclass(cls, IRDLOperation) and has_write_roles(cls)
        if not w:
            continue
        vals = written(op)
        if not vals:
            continue
        parent = op.parent
        in_dead = dead_block.get(id(parent))
        if in_dead is None:
            in_dead = dead_block[id(parent)] = in_dead_loop(op)
        for v in vals:
            (dead if in_dead else live).setdefault(base_buffer(v), op)
    return live, dead


def _initialised(base: SSAValue) -> bool:
    """A tensor created with contents (not ``nl.ndarray`` and not a parameter)."""
    return isinstance(base, OpResult) and base.op.name not in _UNINITIALISED


def check_writes(b, src, block: Block, specs, outs: list, annotations: dict[str, Any],
                 return_loc: SourceLoc | None) -> None:
    """The immutability and output-written checks of the module docstring.

    Args:
        b: the frontend IRBuilder (``b.beta1`` selects Beta 1 rules).
        src: the kernel's FunctionSource (for the location of the ``def``).
        block: the kernel function's body block (its arguments are the tensor parameters,
            in the order of the tensor ``specs``).
        outs: the returned Tensors.
        annotations: ``{parameter: nt annotation}`` from :func:`check_arguments`.
        return_loc: the location of the kernel's ``return`` (None: none).

    Raises:
        NKIError: ``err_cannot_update_immutable_parameter``,
            ``err_mutable_parameter_not_returned``, ``err_tensor_output_not_written_to``
            (the last one in Beta 1 only; Beta 2+ gets an ``NKIKernelWarning``).
    """
    tensor_specs = [s for s in specs if s.kind == "tensor"]
    params: dict[SSAValue, str] = {v: s.name for s, v in zip(tensor_specs, block.args)}
    live, dead = find_writes(block)
    returned = [base_buffer(o.value) for o in outs]
    beta1 = bool(getattr(b, "beta1", False))
    where = return_loc or src.loc(src.node)

    def mutable(name: str) -> bool:
        return bool(getattr(annotations.get(name), "mutable", False))

    if beta1 and outs:
        for base, op in live.items():
            name = params.get(base)
            if name is not None and not mutable(name):
                raise NKIError(
                    f"cannot update immutable parameter '{name}': kernel parameters are immutable "
                    f"in NKI Beta 1; annotate it 'def kernel({name}: nt.mutable_tensor)' (and "
                    f"return it), or copy it into a new nl.shared_hbm tensor and write that",
                    loc_of(op) or where, category="invalid kernel",
                    code="err_cannot_update_immutable_parameter")
        for base, op in live.items():
            name = params.get(base)
            if name is not None and mutable(name) and base not in returned:
                raise NKIError(
                    f"mutable kernel parameter '{name}' is written (at line {_line(op)}) but not "
                    f"returned; add it to the returned tensors (return ..., {name})", where,
                    category="invalid kernel", code="err_mutable_parameter_not_returned")

    if getattr(b, "spmd", None) is not None:
        return  # one instance of a launch grid: another instance may write the outputs
    problems: list[str] = []
    for i, (o, base) in enumerate(zip(outs, returned)):
        if base in live or _initialised(base):
            continue
        what = f"kernel output {i} ('{o.name}')" if o.name else f"kernel output {i}"
        msg = f"{what} is never written: no instruction writes it or a view of it"
        if base in dead:
            msg += (f"; its only write (line {_line(dead[base])}) is inside a loop that runs 0 "
                    f"times")
        problems.append(msg)
    if not outs and not any(base in params for base in live):
        problems.append("the kernel returns no output and writes none of its parameters; a kernel "
                        "must write at least one output (return an nl.shared_hbm tensor it writes)")
    if not problems:
        return
    msg = "; ".join(problems)
    loc = where if outs else src.loc(src.node)
    if beta1:
        raise NKIError(msg, loc, category="invalid kernel", code="err_tensor_output_not_written_to")
    warnings.warn_explicit(f"{loc}: warning: {msg} [err_tensor_output_not_written_to]",
                           NKIKernelWarning, loc.file, loc.line)


def _line(op: Operation) -> str:
    loc = loc_of(op)
    return str(loc.line) if loc is not None else "?"


__all__ = ["check_arguments", "check_writes", "find_writes",
           "param_annotations", "written_operands", "ScalarAnnotation"]
