"""Predicated selection: tensor_copy_predicated (Vector engine).

Semantics: the NKI ``nki.isa`` API page of the instruction (nki/api/nki.isa).  ``src`` is
copied bit-exactly (same dtype); a number is cast to ``dst``'s dtype; ``reverse_pred``
negates the predicate's truth value (``predicate == 0`` selects).
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import dtype_of, prop_flag
from ..dialects.ods import Engine, Flag, Formula, Scalar, Tile
from ..errors import NKIRuntimeError
from ..runtime import numerics as nm
from ..runtime.env import check_elems, finish
from ..runtime.isa_select import raw_rows
from .define import instruction

_UINT = (dtypes.uint8, dtypes.uint16, dtypes.uint32)


@instruction
class tensor_copy_predicated:
    """``dst = where(predicate != 0, src, dst)`` on the Vector engine (``predicate == 0``
    with ``reverse_pred``).

    ``dst`` / ``predicate``: SBUF or PSUM tiles with the same partition count and elements
    per partition, ``predicate`` uint8, uint16 or uint32.  ``src``: a tile of that shape and
    of ``dst``'s dtype (copied bit-exactly; ``src`` and ``predicate`` not both in PSUM), or a
    number (cast to ``dst``'s dtype).

    Raises ``NKIVerifyError`` for another shape, memory or dtype.
    NKI docs: ``nki.isa.tensor_copy_predicated`` (nki/api/generated/nki.isa.tensor_copy_predicated).
    """

    dst = Tile(writes=True, like=("predicate", "src"))
    src = Scalar(tile=True)
    predicate = Tile()
    reverse_pred = Flag(default=False)
    engine = Engine("vector", param=False)
    cost = Formula("two_input", roles=("src", "predicate"),
                   source="analogue: tensor_tensor (k=1 with a PSUM input or a scalar src)")

    def verify(op):
        api = rules.api(op)
        if dtype_of(op.predicate) not in _UINT:
            raise VerifyException(f"{api}: 'predicate' has dtype "
                                  f"{dtypes.name_of(dtype_of(op.predicate))}, but it must be uint8, "
                                  f"uint16 or uint32")
        if isinstance(op.src.type, MemRefType):
            if dtype_of(op.src) != dtype_of(op.dst):
                raise VerifyException(f"{api}: 'src' dtype {dtypes.name_of(dtype_of(op.src))} "
                                      f"differs from 'dst' dtype {dtypes.name_of(dtype_of(op.dst))}; "
                                      f"they must be the same")
            rules.not_both_psum(op, ("src", op.src), ("predicate", op.predicate))

    def interpret(dec, op):
        dst, pred = dec.buf(op, op.dst, "dst"), dec.buf(op, op.predicate, "predicate")
        check_elems(op, dst, ("predicate", pred))
        shape, d, rp, rev = dst.shape, dst.slot, raw_rows(pred), prop_flag(op, "reverse_pred")
        if isinstance(op.src.type, MemRefType):
            src = dec.buf(op, op.src, "src")
            check_elems(op, dst, ("src", src))
            if src.dtype != dst.dtype:
                raise error_at(op, f"{op.name}: 'src' dtype {dtypes.name_of(src.dtype)} differs "
                                   f"from 'dst' dtype {dtypes.name_of(dst.dtype)}", NKIRuntimeError)
            s, reshape = src.slot, src.shape != shape

            def value(env):
                return env[s].reshape(shape) if reshape else env[s]
        else:
            g, store = dec.scalar(op, op.src, "src", shape), nm.make_store(dst.dtype)

            def value(env):
                box = np.empty(1, dst.dtype)  # 1-element (make_store's int path needs an array)
                store(box, np.asarray(g(env), np.float32).reshape(1))
                return box

        def run(env):
            mask = rp(env) != 0
            if rev:
                mask = ~mask
            np.copyto(env[d], value(env), where=mask.reshape(shape))
        return finish(op, run, dst)
