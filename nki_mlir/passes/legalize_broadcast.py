"""Broadcasting for ``nki-legalize`` (``legalize_math.py``): NumPy broadcasts of tiles.

- a partition broadcast ``[1, F] -> [P, F]`` is a TensorE matmul of a ``[1, P]`` ones tile
  (set on GpSimd) with the row, in chunks of <= 512 fp32 (one PSUM bank per partition),
  each copied out of PSUM by a ScalarE ``activation(copy)`` (``tensor_copy`` for integer
  results) -- or left in PSUM when only VectorE ``tensor_tensor`` ops read it as their
  second input (:func:`psum_direct`);
- a ``[P, 1]`` column broadcasts along the free dims with ``memset 0`` +
  ``tensor_scalar(add)``; other free-dim broadcasts copy the source into each broadcast
  index with ``tensor_copy`` on ``memref.subview`` slices.

Engines and PSUM rules: NKI architecture guide (nki/guides/architecture) and the
``nki.isa.nc_matmul`` / ``nki.isa.tensor_tensor`` API pages.
"""
from __future__ import annotations

import itertools

from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.ir import SSAValue

from .. import dtypes
from ..dialects import nki
from ..dialects import nki_sugar as S
from ..dialects.ods_ops import op_class
from ..dialects.common import dtype_of, free_size, shape_of, space_of
from ..dialects.ods_ops import op_class

#: TensorE input dtypes of the ones-matmul (others are converted to fp32 first)
_MATMUL_IN = (dtypes.float32,)


def _is_tile(v: SSAValue) -> bool:
    return isinstance(v.type, MemRefType)


class BroadcastEmitter:
    """The broadcasting half of ``legalize_math.Emitter`` (it supplies ``alloc``, ``add``,
    ``copy``, ``act``, ``memset``, ``ts``, ``sbuf``, ``subview``, ``f32``, ``const_for``)."""

    def part_bcast(self, v: SSAValue, parts: int, out: SSAValue | None = None) -> SSAValue:
        """``[1, f...] -> [parts, f...]`` with TensorE ones-matmuls (exact in fp32), one per
        <= 512-wide chunk of the last dim (512 fp32 per partition fill a PSUM bank), each
        copied out of PSUM (:meth:`evict`) into ``out`` (a new SBUF tile if not given)."""
        shape, dt, chunk = tuple(shape_of(v)), dtype_of(v), 512
        moving = self.sbuf(v)
        if dt not in _MATMUL_IN:  # TensorE inputs: convert to fp32 first
            self.copy(tmp := self.alloc(shape, dtypes.float32), moving)
            moving = tmp
        ones = self.ones(parts)
        if free_size(v) <= chunk:  # one matmul over the whole row
            ps = self.alloc((parts, free_size(v)), dtypes.float32, "psum")
            self.add(op_class("nki.nc_matmul").build(operands=[ps, ones, moving]))
            if out is None:
                out = self.alloc((parts,) + shape[1:], dt)
            self.evict(out, ps)
            return out
        if out is None:
            out = self.alloc((parts,) + shape[1:], dt)
        rank, last = len(shape), shape[-1]
        for idx in itertools.product(*[range(n) for n in shape[1:-1]]):
            for lo in range(0, last, chunk):
                c, offs = min(chunk, last - lo), [0, *idx, lo]
                ps = self.alloc((parts, c), dtypes.float32, "psum")
                row = self.subview(moving, offs, [1] * (rank - 1) + [c])
                self.add(op_class("nki.nc_matmul").build(operands=[ps, ones, row]))
                self.evict(self.subview(out, offs, [parts] + [1] * (rank - 2) + [c]), ps)
        return out

    def ones(self, parts: int) -> SSAValue:
        """A ``[1, parts]`` fp32 tile of ones (the stationary of a partition broadcast),
        set on GpSimd: its queue is usually idle, so the matmul does not wait behind
        VectorE work."""
        ones = self.alloc((1, parts), dtypes.float32)
        self.add(op_class("nki.memset").build(operands=[ones, self.f32(1.0)],
                                    properties={"engine": StringAttr("gpsimd")}))
        return ones

    def evict(self, dst: SSAValue, ps: SSAValue) -> None:
        """Copy a broadcast out of PSUM: a ScalarE ``activation(copy)`` for float results
        (the broadcast's readers are usually VectorE elementwise ops, so the copy goes to
        the other engine that reads PSUM), else a ``tensor_copy``."""
        if dtypes.is_int(dtype_of(dst)) or dtype_of(dst) == dtypes.bool_:
            self.copy(dst, ps)
        else:
            self.act(dst, ps, "copy")

    def part_bcast_psum(self, v: SSAValue, parts: int) -> SSAValue:
        """``[1, F] -> [parts, F]`` fp32 (``F <= 512``) as one TensorE ones-matmul, the
        result left in PSUM for its readers (see :func:`psum_direct`)."""
        ones = self.ones(parts)
        ps = self.alloc((parts, free_size(v)), dtypes.float32, "psum")
        self.add(op_class("nki.nc_matmul").build(operands=[ps, ones, v]))
        return ps

    def bcast(self, v: SSAValue, shape, out: SSAValue | None = None) -> SSAValue:
        """``v`` broadcast (NumPy rules, same rank) to ``shape``; written into ``out`` if given."""
        shape = tuple(shape)
        s = tuple(shape_of(v))
        if s[0] == 1 and shape[0] > 1:
            if out is not None and s[1:] == shape[1:] and dtype_of(out) == dtype_of(v):
                return self.part_bcast(v, shape[0], out)   # straight into the result
            v = self.part_bcast(v, shape[0])
            s = tuple(shape_of(v))
        if s == shape:
            if out is not None:
                self.copy(out, v)
                return out
            return v
        dst = out if out is not None else self.alloc(shape, dtype_of(v))
        if free_size(v) == 1:  # a [P, 1] column: dst = 0 + column
            self.memset(dst, self.const_for(dtype_of(dst), 0))
            self.ts(dst, dst, "add", v)
            return dst
        rank = len(shape)
        bdims = [d for d in range(1, rank) if s[d] == 1 and shape[d] > 1]
        sizes = [1 if d in bdims else shape[d] for d in range(rank)]
        src = self.subview(v, [0] * rank, sizes) if any(s[d] != sizes[d] for d in range(rank)) else v
        for idx in itertools.product(*[range(shape[d]) for d in bdims]):
            offs = [0] * rank
            for d, i in zip(bdims, idx):
                offs[d] = i
            self.copy(self.subview(dst, offs, sizes), src)
        return dst


#: one PSUM bank per partition (2 KiB, 512 fp32): what one instruction may read of PSUM
_PSUM_BANK_FP32 = 512


def psum_direct(op: S.BroadcastToOp) -> bool:
    """A fp32 row ``[1, F] -> [P, F]`` whose broadcast fits one PSUM bank (``F <= 512``),
    read only as the second input of VectorE ``tensor_tensor`` ops whose first input is on
    SBUF: those read the TensorE result in PSUM directly (a tensor_tensor with a PSUM input
    costs ``N`` instead of ``2N`` cycles), with no copy to SBUF."""
    x, r = op.x, op.results[0]
    if not (_is_tile(x) and len(shape_of(x)) == 2 and shape_of(x)[0] == 1 and
            shape_of(r)[0] > 1 and tuple(shape_of(r)[1:]) == tuple(shape_of(x)[1:]) and
            dtype_of(x) == dtypes.float32 and dtype_of(r) == dtypes.float32 and
            space_of(x) == "sbuf" and free_size(x) <= _PSUM_BANK_FP32 and r.uses):
        return False
    for use in r.uses:
        user = use.operation
        if user.name != "nki.tensor_tensor" or use.index != 2 or user.data1 is r \
                or space_of(user.data1) != "sbuf":
            return False
        eng = user.properties.get("engine")
        if isinstance(eng, StringAttr) and eng.data not in ("vector", "unknown"):
            return False
        if user.op.data == "power":
            return False
    return True
