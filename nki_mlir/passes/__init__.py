"""The pass registry: the single source of truth for ``nki-opt`` and the compile driver.

Default pipeline (design.md section 5)::

    nki-legalize -> lower-nki-to-nisa -> nisa-allocate -> nisa-schedule
"""
from __future__ import annotations

from xdsl.passes import ModulePass


def get_all_passes() -> list[type[ModulePass]]:
    """Every pass class we define (each has a kebab-case ``name``)."""
    from .allocate import NisaAllocate
    from .legalize import NkiLegalize
    from .lower_nki_to_nisa import LowerNkiToNisa
    from .schedule import NisaSchedule

    return [NkiLegalize, LowerNkiToNisa, NisaAllocate, NisaSchedule]


#: the default compile pipeline, in ``-p`` syntax (target is filled in by the driver)
DEFAULT_PIPELINE = ("nki-legalize", "lower-nki-to-nisa", "nisa-allocate", "nisa-schedule")
