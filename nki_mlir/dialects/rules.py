"""Static rules of the NKI ISA shared by the verifiers of ``nki`` and ``nisa`` ops.

TensorE rules (``nc_matmul``, ``nc_transpose``) are in :mod:`.matmul_rules`.  Each check raises ``VerifyException`` with a message that names the instruction, the
operand role and the limit, as NKI error catalogue (nki.errors) asks.  Sources: NKI architecture guide (nki/guides/architecture)-2.3 (NKI docs: Trainium architecture guides, ``nki.isa`` API pages).
"""
from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from .. import targets
from ..targets import GENERATION
from .common import HBM_SPACES, ON_CHIP, PMAX, describe, dtype_of, free_size, shape_of, space_of

ENGINES = ("unknown", "tensor", "vector", "scalar", "gpsimd", "dma", "sync")


_NL_SUGAR = ("ndarray", "zeros", "load", "store", "add", "multiply", "exp", "matmul")


def api(op: Operation) -> str:
    """The name a user knows an op by: ``nki.tensor_tensor`` -> ``nisa.tensor_tensor``,
    ``nki.ndarray`` -> ``nl.ndarray``; ``nisa`` ops keep their IR name."""
    if op.name.startswith("nki."):
        short = op.name[4:]
        return ("nl." if short in _NL_SUGAR else "nisa.") + short
    return op.name


def target_of(op: Operation) -> str:
    """The ``nisa.target`` of the module holding ``op`` (default :data:`nki_mlir.targets.DEFAULT`)."""
    node: Operation | None = op
    while node is not None:
        t = node.attributes.get("nisa.target")
        if t is not None:
            return t.target.data  # type: ignore[attr-defined]
        node = node.parent_op()
    return targets.DEFAULT


def require_target(op: Operation, minimum: str, feature: str) -> None:
    """Architecture gating (NKI error catalogue (nki.errors)): ``feature`` of ``op`` needs
    ``minimum`` (``"trn2"`` / ``"trn3"``) or newer."""
    t = target_of(op)
    if GENERATION[t] < GENERATION[minimum]:
        raise VerifyException(
            f"{api(op)}: {feature} needs {minimum} (NeuronCore-v{GENERATION[minimum]}) or newer, "
            f"but the target is {t}; compile with target=\"{minimum}\" or set "
            f"NEURON_PLATFORM_TARGET_OVERRIDE={minimum}")


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


def same_dtype(op: Operation, a: str, b: str, why: str) -> None:
    """Operands ``a`` and ``b`` of ``op`` (role names) have one dtype; ``why`` ends the message."""
    da, db = dtype_of(getattr(op, a)), dtype_of(getattr(op, b))
    if da != db:
        raise VerifyException(f"{api(op)}: '{a}' dtype {dtypes.name_of(da)} differs "
                              f"from '{b}' dtype {dtypes.name_of(db)}; {why}")


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
    mode = getattr(op.properties.get("dge_mode"), "data", "unknown")
    if mode == "hwdge":
        require_target(op, "trn2", "dge_mode=hwdge")
        if dtype_of(dst) != dtype_of(src):
            raise VerifyException(
                f"{api(op)}: dge_mode=hwdge needs equal dtypes, but 'dst' is "
                f"{dtypes.name_of(dtype_of(dst))} and 'src' is {dtypes.name_of(dtype_of(src))} "
                f"(hardware DGE does not convert; use .view() or another dge_mode)")
    eng = getattr(op.properties.get("engine"), "data", "unknown")
    if op.name.startswith("nki.") and eng not in ("unknown", "sync", "scalar"):
        raise VerifyException(f"{api(op)}: engine={eng} is not supported (a DMA's engine picks "
                              f"the hwdge descriptor queue: sync or scalar)")


# ----------------------------------------------------------- core-instruction checks
# NKI error catalogue (nki.errors) items 9, 14, 23-26, 40 and section 5.4 (the core nki.isa pages).

#: ALU operators that work on raw integer bits (NKI API common tables (nki/api/nki.api.shared); same spelling in
#: ``nki`` and ``nisa``)
BITVEC_OPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert")


def allowed_starts(n: int) -> tuple[int, ...]:
    """Start partitions an operand of ``n`` partitions may use (NKI architecture guide (nki/guides/architecture))."""
    return (0,) if n > 64 else (0, 64) if n > 32 else (0, 32, 64, 96)


def partition_start(v: SSAValue) -> int | None:
    """The static start partition of an on-chip operand, or None when it is not static.

    Follows ``memref.subview`` sources (adding their dim-0 offsets) down to the tensor's
    creation: ``nki.ndarray(address=[p, off])`` / ``nisa.alloc {nkim.partition | nkim.address}``
    start at ``p``; other creations (unplaced tensors, block arguments) at 0, where the
    allocator places them.
    """
    start = 0
    while True:
        owner = v.owner
        if isinstance(owner, memref.SubviewOp):
            offs = list(owner.static_offsets.get_values())
            sizes = list(owner.static_sizes.get_values())
            res = owner.result.type.get_shape()
            if not offs or offs[0] == memref.DYNAMIC_INDEX or not res or sizes[0] != res[0]:
                return None
            start += offs[0]
            v = owner.source
            continue
        if not isinstance(owner, Operation):
            return start  # a block argument
        if owner.name not in ("nki.ndarray", "nisa.alloc", "nki.zeros", "nki.load"):
            return None
        p = owner.attributes.get("nkim.partition")
        if isinstance(p, IntegerAttr):
            return start + p.value.data
        addr = owner.attributes.get("nkim.address") or owner.properties.get("address")
        if isinstance(addr, ArrayAttr) and addr.data and isinstance(addr.data[0], IntegerAttr):
            return start + addr.data[0].value.data
        return start


def start_partition(op: Operation, *pairs: tuple[str, SSAValue | None]) -> None:
    """Start-partition rule (item 9) for each on-chip ``(role, operand)`` with a static start:
    64 < n <= 128 -> 0; 32 < n <= 64 -> 0 or 64; n <= 32 -> 0, 32, 64 or 96."""
    for role, v in pairs:
        if v is None or space_of(v) not in ON_CHIP:
            continue
        n = shape_of(v)[0]
        s = partition_start(v)
        ok = allowed_starts(n)
        if s is not None and s not in ok:
            raise VerifyException(
                f"{api(op)}: operand '{role}' covers partitions [{s}, {s + n}), but an operand "
                f"of {n} partitions must start at partition {' or '.join(map(str, ok))} "
                f"(start-partition rule: n <= 32 -> 0/32/64/96, n <= 64 -> 0/64, else 0)")


def engine_of(op: Operation, default: str = "unknown") -> str:
    """The op's ``engine`` property, or ``default`` when absent or ``unknown``."""
    e = op.properties.get("engine")
    name = getattr(e, "data", None)
    return default if name in (None, "unknown") else name


def gpsimd_no_psum(op: Operation, eng: str, *pairs: tuple[str, SSAValue | None], why: str = "") -> None:
    """Item 14: an instruction running on GpSimd (``eng``) touches no PSUM operand."""
    if eng != "gpsimd":
        return
    for role, v in pairs:
        if v is not None and space_of(v) == "psum":
            raise VerifyException(
                f"{api(op)}: operand '{role}' is in psum, but this instruction runs on the GpSimd "
                f"engine{why}, which cannot access PSUM (copy the data to SBUF first"
                + (")" if why else ", or use engine=nisa.engine.vector)"))


def bitvec_operands(op: Operation, op_role: str, token: str | None,
                    *pairs: tuple[str, SSAValue | None]) -> None:
    """Item 23: a bitvec operator reads integer tensors only."""
    if token not in BITVEC_OPS:
        return
    for role, v in pairs:
        if v is not None and isinstance(v.type, MemRefType) and not dtypes.is_int(dtype_of(v)):
            raise VerifyException(
                f"{api(op)}: {op_role}={token} is a bitvec operator working on integer bits, but "
                f"operand '{role}' is {dtypes.name_of(dtype_of(v))} (bitvec operators need "
                f"integer dtypes)")


def tensor_scalar_operands(op: Operation, op0: str, op1: str | None, data: SSAValue,
                           operand0: SSAValue | None, operand1: SSAValue | None) -> None:
    """Items 25, 40, 23 for ``tensor_scalar``: op0/op1 of one class; arithmetic tensor
    operands are float32; bitvec data and tensor operands are integers."""
    bit0 = op0 in BITVEC_OPS
    if op1 is not None and (op1 in BITVEC_OPS) != bit0:
        kinds = {True: "bitvec", False: "arithmetic"}
        raise VerifyException(
            f"{api(op)}: op0={op0} is {kinds[bit0]} but op1={op1} is {kinds[not bit0]}; op0 and "
            f"op1 must be of the same class (both bitvec or both arithmetic)")
    for role, tok, v in (("operand0", op0, operand0), ("operand1", op1, operand1)):
        if tok is None or v is None or not isinstance(v.type, MemRefType):
            continue
        if tok not in BITVEC_OPS and dtype_of(v) != dtypes.float32:
            raise VerifyException(
                f"{api(op)}: operand '{role}' of the arithmetic operator {tok} must be float32 "
                f"(a scalar or a [P, 1] float32 tensor), got {describe(v)}")
    bitvec_operands(op, "op0", op0, ("data", data), ("operand0", operand0), ("operand1", operand1))


def activation_operands(op: Operation, scale: SSAValue, bias: SSAValue | None) -> None:
    """Item 24: ``activation`` scale is float32 (scalar or ``[P, 1]``); a bias tensor is
    float32, bfloat16 or float16 (the NKI Beta 1 rule)."""
    if isinstance(scale.type, MemRefType):
        if dtype_of(scale) != dtypes.float32:
            raise VerifyException(
                f"{api(op)}: operand 'scale' must be float32 (a scalar or a [P, 1] float32 "
                f"tensor), got {describe(scale)} [err_activation_scale_invalid_type]")
    elif not is_f32_scalar(scale):
        raise VerifyException(f"{api(op)}: operand 'scale' must be a float32 scalar or a [P, 1] "
                              f"float32 tensor, got {scale.type} [err_activation_scale_invalid_type]")
    if bias is not None and isinstance(bias.type, MemRefType) and dtype_of(bias) not in (
            dtypes.float32, dtypes.bfloat16, dtypes.float16):
        raise VerifyException(
            f"{api(op)}: operand 'bias' must be float32, bfloat16 or float16, got {describe(bias)} "
            f"[err_activation_bias_invalid_type]")


def is_f32_scalar(v: SSAValue) -> bool:
    from xdsl.dialects.builtin import Float32Type
    return isinstance(v.type, Float32Type)


def reduce_cmd_needs_op(op: Operation) -> None:
    """Item 40: an accumulating ``reduce_cmd`` needs a ``reduce_op``."""
    cmd = getattr(op.properties.get("reduce_cmd"), "data", "idle")
    if cmd in ("reduce", "reset_reduce", "load_reduce") and op.properties.get("reduce_op") is None:
        raise VerifyException(f"{api(op)}: reduce_cmd={cmd} accumulates the results, but no "
                              f"reduce_op is given (use reduce_op=nl.add)")


def memset_value(op: Operation, dst: SSAValue, value: SSAValue) -> None:
    """Item 26: the ``memset`` value matches ``dst``'s dtype kind (an integer for integer
    tensors, in range) when it is a constant."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr
    if isinstance(value.type, MemRefType):
        raise VerifyException(f"{api(op)}: 'value' must be a compile-time number, got a tensor")
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp):
        return
    dt, c = dtype_of(dst), owner.value
    if dtypes.is_int(dt) and dt != dtypes.bool_:
        if isinstance(c, FloatAttr):
            raise VerifyException(
                f"{api(op)}: value {c.value.data!r} is a float, but 'dst' is {dtypes.name_of(dt)}; "
                f"the value must match the dtype kind (an integer for integer tensors)")
        if isinstance(c, IntegerAttr):
            import numpy as np
            info, x = np.iinfo(dt), c.value.data
            width = dt.itemsize * 8
            if info.min == 0 and -(1 << (width - 1)) <= x < 0:
                x += 1 << width  # a signless constant holds an unsigned value's bits
            if not info.min <= x <= info.max:
                raise VerifyException(
                    f"{api(op)}: value {x} does not fit 'dst' dtype {dtypes.name_of(dt)} "
                    f"(range [{info.min}, {info.max}])")


def tensor_copy_engine(op: Operation) -> None:
    """``tensor_copy`` on ScalarE (ACT) needs NeuronCore-v3: on trn1 use
    ``activation(op=nl.copy)`` (nki.isa API reference (nki/api/nki/isa))."""
    if engine_of(op) == "scalar" and GENERATION[target_of(op)] < 3:
        raise VerifyException(
            f"{api(op)}: the scalar engine (ACT) cannot run tensor_copy on {target_of(op)} "
            f"(NeuronCore-v2); use nisa.activation(op=nl.copy, ...) or engine=nisa.engine.vector")


def core(op: Operation, roles: tuple[str, ...], default_engine: str, why: str = "") -> None:
    """The start-partition rule and GpSimd's no-PSUM rule for the tensor ``roles`` of a core
    instruction whose engine, when not chosen, is ``default_engine``."""
    pairs = tuple((r, getattr(op, r)) for r in roles)
    start_partition(op, *pairs)
    gpsimd_no_psum(op, engine_of(op, default_engine), *pairs, why=why)
