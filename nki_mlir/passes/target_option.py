"""The target a pass of the pipeline works for (``nisa-allocate``'s ``target`` option)."""
from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, StringAttr

from ..dialects.common import TargetAttr
from ..errors import NKIError
from ..targets import DEFAULT, TARGETS


def module_target(module: ModuleOp, option: str) -> str:
    """The target to allocate for: the pass option, else ``nisa.target``, else the default
    target (:data:`nki_mlir.targets.DEFAULT`)."""
    attr = module.attributes.get("nisa.target")
    target = option or (attr.target.data if isinstance(attr, TargetAttr) else
                        attr.data if isinstance(attr, StringAttr) else DEFAULT)
    if target not in TARGETS:
        err = NKIError(f"unknown target '{target}' (expected one of {', '.join(TARGETS)})",
                       category="bad option" if option else "error")
        if not option:
            err.op = module  # the module's nisa.target attribute: located at the module
        raise err
    return target
