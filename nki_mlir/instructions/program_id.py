"""program_id (ours): a program instance's id along one launch-grid axis, as an ``index``.

The frontend traces the instances of an SPMD / LNC launch once when the kernel's Python
uses ``nl.program_id`` only as a number in index arithmetic (offsets, slices): the id is
then this op's result, read from the running instance when the op executes, and every
instance runs the same compiled program (:mod:`nki_mlir.frontend.spmd`).  A kernel that
needs the id as a Python value (``if pid == 0``, ``range(pid)``, a dict key) is traced
once per instance with the id a Python int, as before, and never contains this op.

Semantics: NKI ``nki.language.program_id`` page (nki/api/generated/nki.language.program_id):
the index of the program instance along ``axis`` of the launch grid.
"""
from __future__ import annotations

from xdsl.dialects.builtin import IndexType

from ..dialects.ods import Engine, Formula, Int
from ..runtime.env import STATE, Fault, guard
from .define import instruction


@instruction
class program_id:
    """Ours, not an NKI API: the running instance's program id along launch-grid ``axis``
    (an ``int`` in ``[0, grid[axis])``) as an ``index``, for the dynamic offsets of a kernel
    traced once for every instance of its launch (the frontend emits it: ``nl.program_id``
    in ``frontend/spmd.py``).  A run outside the launch needs the ids
    (``CompiledKernel.run(..., program_ids=...)``), else it is a run-time error.
    """

    axis = Int(strict=True)
    engine = Engine("sync", param=False)
    cost = Formula("none", source="a compile-time constant of each program instance on "
                                  "hardware: no engine time")
    results = (("result", IndexType),)
    public = False

    def interpret(dec, op):
        axis = op.axis.value.data
        r = dec.define(op.result, op)

        def run(env):
            st = env[STATE]
            if st is None:  # a timing-only walk (perf/plan_walk.py): the frontend never lets
                env[r] = 0  # a symbolic id reach control flow, so only addresses, unread, vary
                return
            ids = st.launch.ids if st.launch is not None else st.program_ids
            if ids is None or axis >= len(ids):
                raise Fault(f"this program serves every program instance of its launch and "
                            f"reads nl.program_id({axis}) when it runs: run it through the "
                            f"launch (kernel[2](...)), or give the instance's ids "
                            f"(CompiledKernel.run(..., program_ids=(0,)))")
            env[r] = ids[axis]
        return guard(op, run)
