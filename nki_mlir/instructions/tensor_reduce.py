"""tensor_reduce: a reduction over the trailing free axes of a tile (Vector by default).

Semantics: the NKI ``nki.isa.tensor_reduce`` API page (nki/api/generated/nki.isa.tensor_reduce).
Its ``nisa`` op is AWS's ``nisa.tensor_reduce_arith(dst, src, op, negated, num_r_dim)``: the
``axis`` list becomes the number of innermost free dims reduced, the operator AWS's
``ArithOp`` spelling (``maximum`` -> ``max``).  Float32 math cast to ``dst``'s dtype; the
integer-only (bitvec) reductions use exact int64 math.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import bool_attr, free_size, prop_flag, shape_of, str_attr
from ..dialects.ods import Engine, Flag, Formula, Int, IntList, OpToken, Tile
from ..dialects.ods_forms import IsaForm
from ..dialects.vector_rules import ARITH_NAMES, ARITH_OPS, REDUCE_OPS
from ..errors import NKIRuntimeError, NKITypeError
from ..frontend.values import Tensor
from ..runtime import numerics as nm
from ..runtime.env import finish, writes_f32
from .alu import require_int
from .define import instruction


def _kept(shape, first: int) -> int:
    kept = 1
    for d in shape[1:first]:
        kept *= d
    return kept


def _lower_props(op) -> dict:
    rank = len(shape_of(op.data))
    first = min(a.value.data for a in op.axis.data)
    return {"op": str_attr(ARITH_OPS[op.op.data]), "negated": bool_attr(prop_flag(op, "negate")),
            "num_r_dim": IntegerAttr(rank - first, i64)}


def _verify_arith(op) -> None:
    n = op.num_r_dim.value.data
    shape = shape_of(op.src)
    if not 1 <= n <= len(shape) - 1:
        raise VerifyException(f"nisa.tensor_reduce_arith: num_r_dim={n} must be between 1 and "
                              f"the number of free dims ({len(shape) - 1})")
    kept = _kept(shape, len(shape) - n)
    if free_size(op.dst) != kept:
        raise VerifyException(f"nisa.tensor_reduce_arith: dst must hold {kept} element(s) per "
                              f"partition, got {list(shape_of(op.dst))}")
    rules.bitvec_operands(op, "op", op.op.data, ("src", op.src))


@instruction
class tensor_reduce:
    """``dst = op`` reduced over the ``axis`` free axes of ``data`` (times -1 with ``negate``).

    ``axis``: an int or a tuple of ints, the trailing free axes of ``data`` (never the
    partition axis 0; negative values count from the end).  ``data`` / ``dst``: SBUF or PSUM
    tiles of the same partition count, ``dst`` holding the kept elements per partition
    (``keepdims`` keeps the reduced axes as size 1; either shape is accepted).  ``op``: an
    ``nl`` operator (``nl.add``, ``nl.maximum``, ``nl.multiply``, the logical and bitwise
    ones; ``nl.max`` / ``nl.min`` / ``nl.sum`` stand for their operators).  Runs on the Vector
    engine.

    Raises ``NKITypeError`` for another operator or an ``axis`` that is not integers, and
    ``NKIVerifyError`` for illegal axes or a ``dst`` of another size.
    NKI docs: ``nki.isa.tensor_reduce`` (nki/api/generated/nki.isa.tensor_reduce).
    """

    dst = Tile(writes=True, partitions_of="data")
    op = OpToken(allowed=REDUCE_OPS)
    data = Tile()
    axis = IntList()
    negate = Flag(default=False)
    keepdims = Flag(default=False)
    engine = Engine("vector", scalar="trn1", gpsimd="trn1", param=False)
    start_partitions = True
    full_writes = ("dst",)
    cost = Formula("tensor_reduce", roles=("src",),
                   source="ISA_OLD tensor_reduce: N, bf16 add/max N/2 (ARCH3 perf mode other)")
    isa = IsaForm("tensor_reduce_arith", dst=Tile(writes=True, partitions_of="src"), src=Tile(),
                  op=OpToken(allowed=ARITH_NAMES), negated=Int(), num_r_dim=Int(),
                  sources={"src": "data"}, props=_lower_props, verify=_verify_arith)

    def call(cg, api, args):
        axis = args["axis"]
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            raise cg.b.error(f"{api}: axis must be an int or a tuple of ints, got {axis!r}",
                             NKITypeError)
        x = args["data"]
        if isinstance(x, Tensor):
            axes = tuple(a + x.ndim if a < 0 else a for a in axes)
        args["axis"] = list(axes)

    def verify(op):
        rank = len(shape_of(op.data))
        axes = sorted(a.value.data for a in op.axis.data)
        if not axes or axes[0] <= 0 or axes != list(range(axes[0], rank)):
            raise VerifyException(
                f"{rules.api(op)}: axis={axes} is illegal for a rank-{rank} tensor; the reduced "
                f"axes must be the trailing free axes (1..{rank - 1}), never the partition axis 0")
        kept = _kept(shape_of(op.data), axes[0])
        if free_size(op.dst) != kept:
            raise VerifyException(f"{rules.api(op)}: dst must hold {kept} element(s) per partition "
                                  f"after reducing axes {axes}, got shape {list(shape_of(op.dst))}")
        rules.bitvec_operands(op, "op", op.op.data, ("data", op.data))

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        name = op.op.data
        n = int(op.num_r_dim.value.data)
        negated = bool(op.negated.value.data)
        free_dims = src.shape[1:]
        if not 1 <= n <= len(free_dims):
            raise error_at(op, f"nisa.tensor_reduce_arith: num_r_dim={n} must be between 1 and the "
                               f"number of free dims ({len(free_dims)})", NKIRuntimeError)
        kept = int(np.prod(free_dims[:len(free_dims) - n], dtype=np.int64))
        red = int(np.prod(free_dims[len(free_dims) - n:], dtype=np.int64))
        if dst.parts != src.parts or dst.free != kept:
            raise error_at(op, f"nisa.tensor_reduce_arith: dst must be [{src.parts}, {kept}...] "
                               f"({kept} element(s) per partition), got {list(dst.shape)}",
                           NKIRuntimeError)
        P, d, s, shape = src.parts, dst.slot, src.slot, dst.shape
        if name in nm.REDUCE_INT:
            require_int(op, f"op={name}", ("src", src))
            fn, store = nm.REDUCE_INT[name], nm.make_int_store(dst.dtype)

            def run(env):
                r = fn(env[s].astype(np.int64).reshape(P, kept, red))
                store(env[d], (-r if negated else r).reshape(shape))
        elif name in nm.REDUCE_UFUNC and writes_f32(dst) and dst.shape == (P, kept):
            # float32 sums straight into dst (the same reduction: bit-identical)
            u = nm.REDUCE_UFUNC[name]

            def run(env):
                dv = env[d]
                u.reduce(nm.to_f32(env[s]).reshape(P, kept, red), axis=-1, out=dv)
                if negated:
                    np.negative(dv, out=dv)
        elif name in nm.REDUCE:
            fn, store = nm.REDUCE[name], nm.make_store(dst.dtype)

            def run(env):
                r = fn(nm.to_f32(env[s]).reshape(P, kept, red))
                store(env[d], (np.negative(r) if negated else r).reshape(shape))
        else:
            raise error_at(op, f"nisa.tensor_reduce_arith: op={name} is not a reduction operator "
                               f"(expected one of {', '.join([*nm.REDUCE, *nm.REDUCE_INT])})",
                           NKIRuntimeError)
        return finish(op, run, dst)
