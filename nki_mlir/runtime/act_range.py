"""Run-time check of the documented valid input ranges of the ScalarE activation functions.

``log`` [2^-64, 2^64], ``sin`` [-pi, pi], ``arctan`` [-pi/2, pi/2], ``sqrt`` [2^-116, 2^118],
``rsqrt`` [2^-87, 2^97], ``reciprocal`` +-[2^-42, 2^42] (NKI API common tables (nki/api/nki.api.shared), the NKI
``nki.api.shared`` activation table: outside them the ScalarE polynomials give invalid
output).  The interpreter still computes the exact function; it reports an input outside
the range as a :class:`~nki_mlir.errors.NKIRangeWarning` located at the instruction's
kernel source line, naming the instruction, the function, the offending value and the
range.  Cost: one min and one max over the input per execution; at most one warning per
instruction per run.

``NKI_MLIR_RANGE_CHECK``: ``warn`` (default), ``error`` (a located NKIRuntimeError) or
``off``.  ``warnings.simplefilter("error", NKIRangeWarning)`` also turns it into the located
NKIRuntimeError (not a bare warning exception), like every other run-time fault.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..diagnostics import loc_of
from ..errors import NKIRangeWarning
from . import numerics as nm
from .env import STATE, Fault

if TYPE_CHECKING:
    from .decoder import Decoder

#: environment variable selecting the check: warn (default), error or off
RANGE_CHECK_ENV = "NKI_MLIR_RANGE_CHECK"


def range_checker(dec: Decoder, op, name: str) -> Callable[[list, object], None] | None:
    """``check(env, x)`` for the input ``x`` (fp32, after scale and bias) of activation
    ``name`` in ``op``, or None when the function has no documented range.

    Raises (inside the closure) :class:`~.env.Fault`, which the instruction's guard turns
    into a located NKIRuntimeError, in ``error`` mode or when a warning filter makes the
    warning an exception.
    """
    if name not in nm.ACT_RANGES:
        return None
    text = nm.ACT_RANGES[name][2]
    done = object()  # in State.once after this instruction has reported in the current run
    loc = loc_of(op)
    api = op.name

    def check(env, x):
        st = env[STATE]
        mode = st.range_mode
        if mode is None:     # read once per run (an environment lookup costs ~1 us)
            mode = st.range_mode = os.environ.get(RANGE_CHECK_ENV, "warn")
        once = st.once
        if mode == "off" or done in once:
            return
        bad = nm.act_range_violation(name, x)
        if bad is None:
            return
        once.add(done)  # (the per-run state: queue mode runs instructions on env snapshots)
        msg = (f"op={name} got the input {bad:.9g} (data*scale+bias), outside its valid input "
               f"range {text}; the ScalarE output is invalid there (NKI API common tables, activation functions: nki/api/nki.api.shared)")
        if mode == "error":
            raise Fault(msg)
        where = f"{loc}: " if loc is not None else ""
        try:
            warnings.warn_explicit(f"{where}{api}: {msg}", NKIRangeWarning,
                                   loc.file if loc else "<nki kernel>", loc.line if loc else 0)
        except NKIRangeWarning:
            raise Fault(msg) from None
    return check
