"""The frontend: a ``@nki.jit`` Python kernel -> an ``nki`` dialect module.

Entry point: :func:`build_module`.  The kernel's Python runs on proxies (``trace_build.py``,
``tracer.py``); see docs/frontend.md.
"""
from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..dialects.common import TargetAttr, contiguous_strides, memref
from ..errors import NKIError, NKISyntaxError, NKITypeError, NKIVerifyError
from . import (  # noqa: F401  (register the API handlers)
    beta1, isa_calls, isa_control, device_loops, isa_movement, isa_select,
    lang_calls, lang_math, lang_create, tensor_methods, tensor_ap,
)
from . import isa_collective, spmd  # noqa: F401,E402  (SPMD/LNC handlers, cross-core instructions)
from . import kernel_checks  # noqa: F401
from .builder import IRBuilder
from .source import FunctionSource, uses_beta1
from .values import Tensor

#: compile-time argument types accepted by a kernel (NKI language guide (nki/get-started/nki-language-guide))
_CONST_TYPES = (int, float, bool, str, tuple, type(None), np.dtype, np.integer, np.floating, np.bool_)


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: a tensor (shape/dtype) or a compile-time constant (value)."""

    name: str
    kind: str  # "tensor" | "const"
    shape: tuple[int, ...] = ()
    dtype: str = ""
    value: Any = None


@dataclass(frozen=True)
class OutputSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class KernelSpec:
    """What a compiled kernel takes and returns (recorded in the artifact manifest)."""

    name: str
    args: tuple[ArgSpec, ...]
    outputs: tuple[OutputSpec, ...]
    returns_tuple: bool


def arg_specs(fn, args: tuple, kwargs: dict) -> tuple[ArgSpec, ...]:
    """Classify the call arguments of ``fn`` (tensors vs compile-time constants).

    Raises:
        NKISyntaxError: the signature uses ``*`` / ``*args`` / ``**kwargs``.
        NKITypeError: a list or other unsupported value is passed, or arguments do not bind.
    """
    src = FunctionSource.of(fn)
    sig = inspect.signature(fn)
    loc = src.loc(src.node) if src else None
    for p in sig.parameters.values():
        if p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise NKISyntaxError("kernel signatures cannot use '*', '*args' or '**kwargs'; list "
                                 "every argument by name", loc)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise NKITypeError(f"{fn.__name__}(): {exc}", loc) from None
    bound.apply_defaults()
    out = []
    for name, v in bound.arguments.items():
        if isinstance(v, np.ndarray):
            wide = v.dtype.kind in "fiu" and v.dtype.itemsize == 8  # no 64-bit NKI types
            try:
                dt = str(v.dtype) if wide else dtypes.name_of(dtypes.as_dtype(v.dtype))
            except NKIError as exc:
                raise exc.relocate(loc) from None
            out.append(ArgSpec(name, "tensor", tuple(int(d) for d in v.shape), dt))
        elif isinstance(v, list):
            raise NKITypeError(f"kernel argument '{name}' is a list; list arguments are not "
                               f"accepted (NKI 0.3+), pass a tuple instead", loc)
        elif isinstance(v, _CONST_TYPES) or hasattr(v, "enum") or _config_object(v):
            out.append(ArgSpec(name, "const", value=v))
        else:
            raise NKITypeError(f"kernel argument '{name}' has unsupported type {type(v).__name__}; "
                               f"pass NumPy arrays for tensors and ints/floats/bools/strings/tuples "
                               f"for compile-time constants", loc)
    return tuple(out)


def _config_object(v: Any) -> bool:
    """A configuration object (an instance of a user class, e.g. a dataclass or NKIObject):
    a compile-time constant, read by the kernel's Python."""
    return hasattr(v, "__dict__") and not callable(v) and not isinstance(v, type) \
        and not isinstance(v, types.ModuleType)


def build_module(fn, specs: tuple[ArgSpec, ...], target: str = "trn2",
                 spmd: "spmd.SpmdInfo | None" = None,
                 unroll_key: str | None = None) -> tuple[ModuleOp, KernelSpec]:
    """Specialise ``fn`` for ``specs`` into a verified ``nki`` dialect module.

    Returns the module (one ``func.func`` named after the kernel, with attribute
    ``nki.output_names``, inside a module carrying ``nisa.target``) and its KernelSpec.
    ``spmd``: the program instance being specialised (grid, program ids, LNC cores), read by
    ``nl.program_id`` & co. (frontend/spmd.py); None for a call without launch brackets.
    ``unroll_key``: the traces of the program instances of one launch share it, so the loops
    one of them had to unroll start unrolled in the next (:func:`.trace_build.trace`).

    Raises:
        NKIError (and subclasses): any problem in the kernel, located at its source line.
    """
    src = FunctionSource.of(fn)
    if src is None:
        raise NKIError(f"cannot read the source of {getattr(fn, '__name__', fn)!r}; kernels must be "
                       f"defined in a .py file")
    for s in specs:
        if s.kind == "tensor" and s.dtype not in dtypes.BY_NAME:
            raise NKITypeError(f"kernel argument '{s.name}' is {s.dtype}; NKI has no 64-bit types "
                               f"(use float32/bfloat16 or int32)", src.loc(src.node))
    arg_types = [memref(s.shape, dtypes.BY_NAME[s.dtype], "shared_hbm") for s in specs if s.kind == "tensor"]
    from .trace_build import trace
    k, result, ret_loc = trace(lambda: _Kernel(fn, src, specs, target, spmd, arg_types), unroll_key)
    b, block = k.b, k.block
    from .beta1.masks import drop_superseded_views
    drop_superseded_views(b)  # full-size views that masked calls replaced (frontend/beta1/masks.py)
    returns_tuple = isinstance(result, (tuple, list))
    outs = list(result) if returns_tuple else ([] if result is None else [result])
    b.loc = ret_loc or src.loc(src.node)
    out_specs = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise NKITypeError(f"a kernel must return HBM tensors (or a tuple of them), got "
                               f"{type(o).__name__} as output {i}", b.loc)
        if o.buffer != "shared_hbm" or not (o.is_base or _whole_reshape(o)):
            raise NKITypeError(f"kernel output {i} ('{o.name}') is {o.describe()}; kernel outputs "
                               f"must be whole tensors allocated with buffer=nl.shared_hbm", b.loc)
        out_specs.append(OutputSpec(o.name or f"output_{i}", o.shape, dtypes.name_of(o.dtype)))
    kernel_checks.check_writes(b, src, block, specs, outs, k.annotations, ret_loc)
    b.emit(func.ReturnOp(*[o.value for o in outs]), verify=False)
    fop = k.fop
    fop.properties["function_type"] = func.FunctionType.from_lists(arg_types, [o.value.type for o in outs])
    fop.attributes["nki.output_names"] = ArrayAttr([StringAttr(s.name) for s in out_specs])
    from ..options import verify_each_pass
    if verify_each_pass():   # else the ops were verified as emitted, the module after the pipeline
        try:
            k.module.verify()
        except VerifyException as exc:
            raise NKIVerifyError(str(exc), src.loc(src.node)) from None
    return k.module, KernelSpec(fn.__name__, specs, tuple(out_specs), returns_tuple)


class _Kernel:
    """A fresh kernel function in its module, with the builder and the argument values."""

    def __init__(self, fn, src, specs, target, spmd, arg_types):
        self.fn, self.src, self.specs = fn, src, specs
        self.block = block = Block(arg_types=arg_types)
        # The function sits in its module from the start, so op verifiers run at emit time
        # see the module's nisa.target (rules.target_of); its type is completed at the end.
        self.fop = func.FuncOp(fn.__name__, func.FunctionType.from_lists(arg_types, []), Region([block]))
        self.module = ModuleOp([self.fop])
        self.module.attributes["nisa.target"] = TargetAttr(target)
        self.b = b = IRBuilder(block)
        b.target = target
        b.beta1 = uses_beta1(fn)
        b.spmd = spmd  # launch grid / LNC info of this program instance (frontend/spmd.py)
        self.scope: dict[str, Any] = {}
        tensor_args = iter(block.args)
        for s in specs:
            if s.kind == "tensor":
                v = next(tensor_args)
                v.name_hint = s.name if s.name.isidentifier() else None
                self.scope[s.name] = Tensor(v, s.shape, dtypes.BY_NAME[s.dtype], "shared_hbm",
                                            tuple(contiguous_strides(s.shape)), 0, block, s.name)
            else:
                self.scope[s.name] = s.value
        self.annotations = kernel_checks.check_arguments(b, src, fn, specs)  # nt annotations


def _whole_reshape(t: Tensor) -> bool:
    """``t`` views all of its storage, contiguously, in another shape (``out.reshape(...)``)."""
    return (t.offset == 0 and t.indirect is None and t.size == int(np.prod(t.storage_shape))
            and tuple(t.strides) == tuple(contiguous_strides(t.shape)))


__all__ = ["build_module", "arg_specs", "KernelSpec", "ArgSpec", "OutputSpec"]
