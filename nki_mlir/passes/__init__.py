"""The pass registry: the single source of truth for ``nki-opt`` and the compile driver.

Default pipeline (:data:`DEFAULT_PIPELINE`; design: docs/pipeline.md)::

    nki-legalize -> lower-nki-to-nisa -> nisa-allocate -> nisa-schedule

:func:`default_pipeline` builds it for one compile; :func:`check_stage` says what may remain
after each of its passes.
"""
from __future__ import annotations

from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ..errors import NKIVerifyError


def get_all_passes() -> list[type[ModulePass]]:
    """Every pass class we define (each has a kebab-case ``name``)."""
    from .allocate import NisaAllocate
    from .legalize import NkiLegalize
    from .lower_nki_to_nisa import LowerNkiToNisa
    from .schedule import NisaSchedule

    return [NkiLegalize, LowerNkiToNisa, NisaAllocate, NisaSchedule]


#: the compile pipeline, in order: ``(pass name, {pass option: compile option})``; the
#: compile options are ``target`` (a resolved target name), ``schedule`` (a schedule mode)
#: and ``spill`` (bool)
DEFAULT_PIPELINE: tuple[tuple[str, dict[str, str]], ...] = (
    ("nki-legalize", {}),
    ("lower-nki-to-nisa", {}),
    ("nisa-allocate", {"target": "target", "spill": "spill"}),
    ("nisa-schedule", {"mode": "schedule"}),
)


def default_pipeline(**compile_options: str) -> list[ModulePass]:
    """The passes of :data:`DEFAULT_PIPELINE`, in order, with their options taken from
    ``compile_options`` (``target=...``, ``schedule=...``; ``spill`` defaults to True;
    KeyError if another is missing)."""
    compile_options = {"spill": True, **compile_options}
    by_name = {p.name: p for p in get_all_passes()}
    return [by_name[name](**{field: compile_options[opt] for field, opt in options.items()})
            for name, options in DEFAULT_PIPELINE]


def check_stage(pass_name: str, module: Operation) -> None:
    """What may remain after each pass of the default pipeline (a spec per stage): no
    ``nki`` sugar op after ``nki-legalize``, no ``nki`` op after ``lower-nki-to-nisa``, no
    unplaced on-chip ``nisa.alloc`` after ``nisa-allocate``.

    Raises:
        NKIVerifyError: (internal) the pass left such an op.
    """
    from ..dialects.common import ON_CHIP, space_of
    from ..dialects.nki import SUGAR_OPS
    # one walk with the stage's own rule (none after nisa-schedule: no walk)
    if pass_name == "nki-legalize":
        sugar: dict[type, bool] = {}        # per op class (isinstance of a long tuple per op)
        for op in module.walk():
            cls = type(op)
            hit = sugar.get(cls)
            if hit is None:
                hit = sugar[cls] = issubclass(cls, SUGAR_OPS)
            if hit:
                raise NKIVerifyError(f"after nki-legalize a sugar op remains: {op.name}")
    elif pass_name == "lower-nki-to-nisa":
        for op in module.walk():
            if op.name.startswith("nki."):
                raise NKIVerifyError(f"after lower-nki-to-nisa an nki op remains: {op.name}")
    elif pass_name == "nisa-allocate":
        for op in module.walk():
            if op.name == "nisa.alloc" and space_of(op.results[0]) in ON_CHIP \
                    and "nkim.offset" not in op.attributes:
                raise NKIVerifyError("after nisa-allocate an on-chip tensor is unplaced")
