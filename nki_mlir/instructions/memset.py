"""memset: fill a tile with a constant (Vector by default, or GpSimd).

Semantics: the NKI ``nki.isa.memset`` API page (nki/api/generated/nki.isa.memset) and the NKI
API common tables (nki/api/nki.api.shared) for the value's kind.  An integer value into a
non-bool integer tile is stored exactly (wrapping), anything else through float32.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.ods import Engine, Scalar, Stream, Tile
from ..errors import NKIRuntimeError, NKITypeError
from ..frontend.values import Tensor
from ..runtime import numerics as nm
from ..runtime.env import finish
from .define import instruction


def check_value(cg, api: str, d: Tensor, value) -> None:
    """The value's kind matches ``dst``'s dtype (an integer literal in range for integer
    tiles) and packed x4 tiles accept only 0 (NKI API common tables, item 26)."""
    if not isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
        return  # the conversion reports the wrong kind
    dt = d.dtype
    if dt in dtypes.X4_VALUE:
        if value != 0:
            raise cg.b.error(f"{api}: dst is {dtypes.name_of(dt)}, a packed x4 type; memset accepts "
                             f"only the value 0 for it, got {value!r}", NKITypeError)
        return
    if dtypes.is_int(dt) and dt != dtypes.bool_:
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise cg.b.error(f"{api}: dst is {dtypes.name_of(dt)}, so value must be an integer, got "
                             f"{value!r}", NKITypeError)
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise cg.b.error(f"{api}: value {value!r} is out of range for dst dtype "
                             f"{dtypes.name_of(dt)} [{info.min}, {info.max}]", NKITypeError)


@instruction
class memset:
    """Fill ``dst`` with ``value``.

    ``dst``: an SBUF or PSUM tile.  ``value``: a compile-time number of ``dst``'s kind (an
    integer in range for integer tiles; only 0 for packed x4 tiles), emitted with ``dst``'s
    dtype.  ``engine``: Vector (the default) or GpSimd (not on PSUM).

    Raises ``NKITypeError`` for a tensor value or a value of the wrong kind or range, and
    ``NKIVerifyError`` for another memory or engine.
    NKI docs: ``nki.isa.memset`` (nki/api/generated/nki.isa.memset).
    """

    dst = Tile(writes=True)
    value = Scalar(tile=True, dtype_of="dst")
    engine = Engine("vector", gpsimd="trn1")
    start_partitions = True
    full_writes = ("dst",)
    cost = Stream("dst", perf="copy", source="ISA_OLD memset: N (ARCH3 perf mode as tensor_copy); "
                  "GpSimd 150 + N")

    def call(cg, api, args):
        value = args["value"]
        if isinstance(value, Tensor):
            raise cg.b.error(f"{api}: value must be a compile-time number", NKITypeError)
        if isinstance(args["dst"], Tensor):
            check_value(cg, api, args["dst"], value)

    def verify(op):
        rules.memset_value(op, op.dst, op.value)

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        if isinstance(op.value.type, MemRefType):
            raise error_at(op, "nisa.memset: 'value' must be a scalar", NKIRuntimeError)
        d, v = dst.slot, dec.use(op, op.value, "value")
        store = nm.make_store(dst.dtype)
        int_value = isinstance(op.value.type, (IntegerType, IndexType))
        if int_value and dtypes.is_int(dst.dtype) and dst.dtype != np.bool_:
            dt = dst.dtype

            def run(env):
                env[d][...] = np.asarray(int(env[v]), dtype=np.int64).astype(dt)
        else:
            def run(env):
                store(env[d], np.float32(env[v]))
        return finish(op, run, dst)
