"""Static rules of the NKI ISA shared by the verifiers of ``nki`` and ``nisa`` ops.

Each check raises ``VerifyException`` with a message that names the instruction, the
operand role and the limit, as nki_spec.md section 6 asks.  Sources: nki_spec.md
sections 2.1-2.3 (NKI docs: Trainium architecture guides, ``nki.isa`` API pages).
"""
from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from .common import HBM_SPACES, ON_CHIP, PMAX, describe, dtype_of, free_size, shape_of, space_of

ENGINES = ("unknown", "tensor", "vector", "scalar", "gpsimd", "dma", "sync")

#: Max moving free size of nc_matmul (fp32 elements of one PSUM bank) per target.
MOVING_FMAX = {"trn1": 512, "trn2": 512, "trn3": 4096}
STATIONARY_FMAX = 128


_NL_SUGAR = ("ndarray", "zeros", "load", "store", "add", "multiply", "exp", "matmul")


def api(op: Operation) -> str:
    """The name a user knows an op by: ``nki.tensor_tensor`` -> ``nisa.tensor_tensor``,
    ``nki.ndarray`` -> ``nl.ndarray``; ``nisa`` ops keep their IR name."""
    if op.name.startswith("nki."):
        short = op.name[4:]
        return ("nl." if short in _NL_SUGAR else "nisa.") + short
    return op.name


def target_of(op: Operation) -> str:
    """The ``nisa.target`` of the module holding ``op`` (default trn2)."""
    node: Operation | None = op
    while node is not None:
        t = node.attributes.get("nisa.target")
        if t is not None:
            return t.target.data  # type: ignore[attr-defined]
        node = node.parent_op()
    return "trn2"


def tile(op: Operation, role: str, v: SSAValue | None, *, spaces=ON_CHIP) -> None:
    """``v`` is a buffer in one of ``spaces``; on-chip it has rank >= 2 and P <= 128."""
    if v is None:
        return
    if not isinstance(v.type, MemRefType):
        raise VerifyException(f"{api(op)}: operand '{role}' must be a tensor, got {v.type}")
    sp = space_of(v)
    if sp not in spaces:
        where = "/".join(spaces)
        raise VerifyException(
            f"{api(op)}: operand '{role}' is a tensor in {sp}, but this instruction only "
            f"accepts {where} tensors (compute engines cannot access HBM; use dma_copy)"
            if sp in HBM_SPACES else
            f"{api(op)}: operand '{role}' is a tensor in {sp}, but this instruction only "
            f"accepts {where} tensors")
    if sp in ON_CHIP:
        on_chip_shape(op, role, v)


def on_chip_shape(op: Operation, role: str, v: SSAValue) -> None:
    shape = shape_of(v)
    if len(shape) < 2:
        what = "the tensor" if role == "result" else f"operand '{role}'"
        raise VerifyException(f"{api(op)}: {what} has rank {len(shape)}; on-chip "
                              f"tensors need a partition dim and at least one free dim")
    if shape[0] > PMAX:
        what = "the tensor" if role == "result" else f"operand '{role}'"
        raise VerifyException(f"{api(op)}: {what} has partition dimension {shape[0]}, which "
                              f"exceeds the architecture limit of {PMAX} (dim 0 of an SBUF/PSUM "
                              f"tensor is the partition dim; tile larger data over a loop)")


def scalar_or_tile(op: Operation, role: str, v: SSAValue | None) -> None:
    """``v`` is a scalar (f32/int) or an on-chip ``[P, 1]`` tile."""
    if v is None or not isinstance(v.type, MemRefType):
        return
    tile(op, role, v)


def elementwise(op: Operation, roles: tuple[str, ...], engines: tuple[str, ...] | None = None) -> None:
    """Each role is an on-chip tile; all share the partition count and per-partition size."""
    pairs = tuple((r, getattr(op, r)) for r in roles)
    for r, v in pairs:
        tile(op, r, v)
    same_partitions(op, *pairs)
    same_free_size(op, *pairs)
    if engines:
        engine(op, engines)


def same_partitions(op: Operation, *pairs: tuple[str, SSAValue | None]) -> None:
    present = [(r, v) for r, v in pairs if v is not None and isinstance(v.type, MemRefType)]
    if not present:
        return
    r0, v0 = present[0]
    for r, v in present[1:]:
        if shape_of(v)[0] != shape_of(v0)[0]:
            raise VerifyException(
                f"{api(op)}: partition counts differ: '{r0}' has {shape_of(v0)[0]}, "
                f"'{r}' has {shape_of(v)[0]} (partition broadcast must be explicit)")


def same_free_size(op: Operation, *pairs: tuple[str, SSAValue | None]) -> None:
    present = [(r, v) for r, v in pairs if v is not None]
    r0, v0 = present[0]
    for r, v in present[1:]:
        if free_size(v) != free_size(v0):
            raise VerifyException(
                f"{api(op)}: per-partition element counts differ: '{r0}' is {describe(v0)}, "
                f"'{r}' is {describe(v)}")


def per_partition_vector(op: Operation, role: str, v: SSAValue | None, parts: int) -> None:
    """A tile operand that must be ``[P, 1]`` (per-partition scalar)."""
    if v is None or not isinstance(v.type, MemRefType):
        return
    tile(op, role, v)
    if free_size(v) != 1 or shape_of(v)[0] != parts:
        raise VerifyException(f"{api(op)}: operand '{role}' must be a scalar or a [{parts}, 1] "
                              f"per-partition tensor, got {describe(v)}")


def not_both_psum(op: Operation, a: tuple[str, SSAValue | None], b: tuple[str, SSAValue | None]) -> None:
    if a[1] is not None and b[1] is not None and space_of(a[1]) == "psum" == space_of(b[1]):
        raise VerifyException(f"{api(op)}: inputs '{a[0]}' and '{b[0]}' are both in PSUM; "
                              f"at most one input may be in PSUM")


def engine(op: Operation, allowed: tuple[str, ...]) -> None:
    e = op.properties.get("engine")
    if e is None:
        return
    name = e.data  # type: ignore[attr-defined]
    if name not in ENGINES:
        raise VerifyException(f"{api(op)}: unknown engine '{name}' (expected one of {', '.join(ENGINES)})")
    if name != "unknown" and name not in allowed:
        raise VerifyException(f"{api(op)}: cannot run on the {name} engine "
                              f"(allowed: {', '.join(allowed)})")


def enum(op: Operation, prop: str, allowed) -> None:
    a = op.properties.get(prop)
    if a is None:
        return
    if getattr(a, "data", None) not in allowed:
        raise VerifyException(f"{api(op)}: {prop}={getattr(a, 'data', a)} is not supported "
                              f"(expected one of: {', '.join(allowed)})")


def matmul(op: Operation, dst: SSAValue, stationary: SSAValue, moving: SSAValue, transpose: bool = False) -> None:
    """nc_matmul: dst[M,N] (+)= stationary[K,M]^T @ moving[K,N] (nki.isa.nc_matmul)."""
    tile(op, "stationary", stationary, spaces=("sbuf",))
    tile(op, "moving", moving, spaces=("sbuf",))
    tile(op, "dst", dst, spaces=("psum",))
    k, m = shape_of(stationary)[0], free_size(stationary)
    k2, n = shape_of(moving)[0], free_size(moving)
    if k != k2:
        raise VerifyException(f"{api(op)}: contraction (partition) sizes differ: stationary has "
                              f"{k}, moving has {k2}")
    if m > STATIONARY_FMAX:
        raise VerifyException(f"{api(op)}: stationary free size {m} exceeds the limit of "
                              f"{STATIONARY_FMAX} (gemm_stationary_fmax)")
    fmax = MOVING_FMAX[target_of(op)]
    if n > fmax:
        raise VerifyException(f"{api(op)}: moving free size {n} exceeds the limit of {fmax} "
                              f"(gemm_moving_fmax on {target_of(op)}: one PSUM bank of fp32)")
    if shape_of(dst)[0] != m or free_size(dst) != n:
        raise VerifyException(f"{api(op)}: dst must be [{m}, {n}] (stationary free x moving free), "
                              f"got {describe(dst)}")
    allowed = (dtypes.float32, dtypes.bfloat16, dtypes.float16, dtypes.float8_e4m3, dtypes.float8_e5m2)
    for role, v in (("stationary", stationary), ("moving", moving)):
        if dtype_of(v) not in allowed:
            raise VerifyException(f"{api(op)}: '{role}' dtype {dtypes.name_of(dtype_of(v))} is not a "
                                  f"TensorE input type (fp8_e4m3, fp8_e5m2, bf16, fp16, fp32)")
    if (dtype_of(stationary) == dtypes.float32) != (dtype_of(moving) == dtypes.float32):
        raise VerifyException(f"{api(op)}: fp32 inputs must pair with fp32 (stationary is "
                              f"{dtypes.name_of(dtype_of(stationary))}, moving is "
                              f"{dtypes.name_of(dtype_of(moving))})")
    if not transpose and target_of(op) != "trn3" and dtype_of(dst) != dtypes.float32:
        raise VerifyException(f"{api(op)}: PSUM dst must be float32 on {target_of(op)}, "
                              f"got {dtypes.name_of(dtype_of(dst))}")


def transpose(op: Operation, dst: SSAValue, data: SSAValue, eng: str) -> None:
    """nc_transpose: dst[f, p] = data[p, f]; TensorE <= 128x128 (SBUF->PSUM), VectorE <= 32x32."""
    limit = 32 if eng == "vector" else PMAX
    tile(op, "data", data, spaces=("sbuf",) if eng != "vector" else ON_CHIP)
    tile(op, "dst", dst, spaces=("psum",) if eng == "tensor" else ON_CHIP)
    p, f = shape_of(data)[0], free_size(data)
    if p > limit or f > limit:
        raise VerifyException(f"{api(op)}: data is [{p}, {f}] but nc_transpose on the {eng} "
                              f"engine handles at most [{limit}, {limit}]")
    if shape_of(dst)[0] != f or free_size(dst) != p:
        raise VerifyException(f"{api(op)}: dst must be [{f}, {p}] (the transpose of data), got {describe(dst)}")
    if dtype_of(dst) != dtype_of(data):
        raise VerifyException(f"{api(op)}: dst dtype {dtypes.name_of(dtype_of(dst))} differs from data dtype "
                              f"{dtypes.name_of(dtype_of(data))}; nc_transpose keeps the dtype")


def dma(op: Operation, dst: SSAValue, src: SSAValue) -> None:
    """dma_copy: HBM<->SBUF, SBUF<->SBUF, HBM<->HBM; never PSUM (NKI 0.3+); equal element counts."""
    for role, v in (("dst", dst), ("src", src)):
        if not isinstance(v.type, MemRefType):
            raise VerifyException(f"{api(op)}: operand '{role}' must be a tensor")
        if space_of(v) == "psum":
            raise VerifyException(f"{api(op)}: operand '{role}' is in PSUM; DMA cannot access PSUM "
                                  f"(copy it to SBUF with tensor_copy first)")
        if space_of(v) == "sbuf":
            on_chip_shape(op, role, v)
    n_dst = 1
    for d in shape_of(dst):
        n_dst *= d
    n_src = 1
    for d in shape_of(src):
        n_src *= d
    if n_dst != n_src:
        raise VerifyException(f"{api(op)}: dst has {n_dst} elements but src has {n_src} "
                              f"(dst is {describe(dst)}, src is {describe(src)})")
