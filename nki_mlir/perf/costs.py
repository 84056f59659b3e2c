"""Static cost of one ``nisa`` instruction: engine occupancy in cycles, or a DMA's shape.

:func:`instruction_cost` gives the compute engine an instruction occupies and for how many
engine cycles (``ns = cycles / clock``), the matmul FLOPs, and for a DMA its
:class:`DmaShape`; :func:`dma_engine_shares` spreads a DMA over the 16 DMA engines (both in
:mod:`.dma_costs`; the operands' facts in :mod:`.operands`).  The
constants come from :class:`~nki_mlir.targets.TargetModel`; the formulas are
docs/cost-model.md (sources: the NKI ``nki.isa`` API pages and the NKI architecture guides of trn1-trn3, named ISA_OLD, ARCH2, ARCH3, ARCH4 in the rows).

Notation: ``N`` = free elements per partition of the instruction's main operand (the
product of the non-partition dims of its memref type; the partition count does not change
the cost, ARCH2 "128 Parallel Compute Lanes"), ``MIN_II`` = ``min_ii_cycles`` (64),
``pm`` = VectorE perf-mode factor, ``sbf`` = ``scalar_bf16_factor`` for a bf16/fp16/fp8 input.
Every ``N`` below is first multiplied by ``strided_penalty`` (2) when an SBUF read has an
innermost stride over 16 B (ARCH2), and a compute instruction with a runtime (register)
offset on an operand costs at least ``dynamic_copy_cycles`` (600, ISA_OLD
``tensor_copy_dynamic_*``; applied to every compute op as the nearest analogue).

Per engine, an instruction of "k inputs" costs (A.6):
  vector ``max(MIN_II, k*N/pm)``, scalar ``max(MIN_II, k*N/sbf)``, gpsimd ``150 + k*N``;
  ``+MIN_II`` when it reads out an accumulator into ``reduce_res`` (ISA_OLD
  ``activation_reduce`` / ARCH2 ActReadAccumulator ~64 cycles).

Formulas (op -> cycles -> source; "analogue" = the documentation says nothing about the op, the
nearest documented instruction's formula is used):

- matmul -> ``f * max(N_mov, 64)``, f = 1 bf16/fp16/fp8, 4 fp32; double_row fp8 ([K, 2, N]):
  N_mov = free size x mm_fp8_factor; at least M/4 (LoadStationary, hidden behind the MM)
  -> ARCH2 TensorE cost model, ARCH3 "Double FP8", PERF Opt #7
- matmul is_transpose -> as nc_transpose, ``max(K, min(64, M))``, 0 FLOPs -> analogue
- nc_matmul_mx (the ``matmul_mx`` formula its definition names) -> ``max(N_mov, 64)`` (4 packed
  values per element along K) -> ARCH4 Quad-MXFP8
- nc_transpose -> tensor ``max(P, min(64, F))`` (ISA_OLD); vector k=1 (analogue: tensor_copy)
- activation, activate2 -> scalar k=1, +MIN_II with reduce_res -> ISA_OLD activation(_reduce)
- tensor_copy, tensor_scalar_arith, memset -> vector k=1 with pm = vector_perf_mode_copy (4)
  for bf16/fp16 contiguous SBUF->SBUF, vector_perf_mode_other (2) for other bf16 inputs;
  gpsimd ``150 + N`` -> ISA_OLD, ARCH3 "Vector Engine Performance Mode", ISA_OLD memset/iota
- tensor_reduce_arith -> vector k=1, pm = max(2 for bf16 add/max, pm_other) -> ISA_OLD (N/2)
- tensor_tensor_arith -> vector ``2N / pm2`` (pm2 = pm_other for bf16 inputs in SBUF), ``N``
  with a PSUM input; scalar same k; gpsimd ``150 + 2N`` -> ISA_OLD, ARCH2 "roughly 2N", A.6
- scalar_tensor_tensor -> as tensor_tensor (data, operand1) -> ISA_OLD (2N; bf16 N)
- reciprocal -> vector ``8N``; scalar ``N``; gpsimd ``150 + 4N`` -> ISA_OLD, SHARED (GpSimd 4x
  slower than ScalarE)
- bn_stats / bn_aggr -> vector ``N`` / ``13N/3`` -> ISA_OLD
- exponential (trn3) -> vector ``N / (4 * sbf * f_S / f_V)``, +MIN_II with reduce_res -> ARCH4
  (VectorE exp has 4x ScalarE's throughput)
- tensor_scalar_reduce -> vector k=1, pm_other for bf16, +MIN_II -> analogue: tensor_scalar
- tensor_scalar_cumulative -> vector k=1, no perf mode (a scan) -> analogue: 1-input vector
- tensor_tensor_scan -> vector k=2, no perf mode -> analogue: tensor_tensor
- select_reduce, tensor_copy_predicated -> vector k=2 (k=1 with a PSUM input or a scalar src),
  +MIN_II with reduce_res -> analogue: tensor_tensor
- range_select, max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle ->
  vector (or gpsimd) k=1 over the data operand -> analogue: tensor_scalar / tensor_reduce
- the instructions defined in ``nki_mlir/instructions`` -> the ``cost`` row of their
  definition (a :class:`~nki_mlir.dialects.ods.Stream`, or a
  :class:`~nki_mlir.dialects.ods.Formula` naming one of :data:`_FORMULAS`, read from the op),
  which names its source
- iota, affine_select -> gpsimd ``150 + N`` -> ISA_OLD (GPSIMD_START then ~N)
- tensor_partition_reduce, nc_n_gather, local_gather, sequence_bounds, nonzero_with_count,
  topk -> gpsimd ``150 + N`` (N = the data or dst free size) -> analogue: iota
- core_barrier -> an empty instruction on its engine (N = 0; ``Formula("empty")``) ->
  analogue: MIN_II / start-up
- dma_copy, dma_transpose, dma_copy_indirect, dma_compute, sendrecv -> engine ``dma``, a
  :class:`DmaShape` timed by :func:`dma_engine_shares` -> DMABW, DMAOV, ARCH3
- alloc, release, no_reorder_*, view_dtype, shared_constant, device_print, register_* (their
  definitions' ``Formula("none")``) ->
  engine ``none``, 0 (bookkeeping / control; the ``sync`` queue is not modelled)

DMA per engine (A.6): rows ``r`` go to engine ``((start + r) // 8) % 16``; an engine's
transfer takes ``bytes / (dma_bytes_per_ns * eff(run) * hbm_scale)`` ns with
``eff(b) = b / (b + 512)`` and ``hbm_scale = min(1, hbm_bytes_per_ns / (16 *
dma_bytes_per_ns))`` for a DMA touching HBM; transposes divide by 0.9 (from HBM) / 0.5
(SBUF to SBUF).  The fixed ``dma_fixed_ns`` (1300 ns) is the timeline's, not included.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from ..dialects.effects import is_view
from ..dialects.ods_forms import Dma
from .dma_costs import HBM, DmaShape, dma_eff, dma_engine_bytes, dma_engine_shares, dma_shape
from .operands import Tile, label_of, role_of, tiles_of
from ..targets import CLOCKED_ENGINES, TargetModel

__all__ = ["InstrCost", "DmaShape", "instruction_cost", "resolve_engine", "dma_engine_shares",
           "dma_engine_bytes", "dma_eff", "HBM", "FALLBACK_LABEL", "NO_COST_OPS", "DMA_OPS"]


#: ops that cost nothing on any engine (bookkeeping, control, registers, debugging)
NO_COST_OPS = frozenset({
    "nisa.alloc", "nisa.release", "nisa.no_reorder_begin", "nisa.no_reorder_end",
    "nisa.view_dtype", "nisa.shared_constant", "nisa.device_print",
})
#: the ``Formula`` kinds of a definition's ``cost`` that name an engine kind rather than a
#: formula: ``none`` (costs nothing: the register instructions), ``dma`` (a DMA transfer,
#: timed by :func:`dma_engine_shares`)
ENGINE_KINDS = ("none", "dma")
#: ops that are DMA transfers (timed by :func:`dma_engine_shares`)
#: (and the instructions whose definition's cost row is a ``Dma`` or ``Formula("dma")``)
DMA_OPS = frozenset({"nisa.dma_copy_indirect", "nisa.collective"})

_TWO_BYTE_FLOAT = ("bfloat16", "float16")
_SCALAR_FAST = ("bfloat16", "float16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")
_FP8 = ("float8_e4m3", "float8_e4m3fn", "float8_e5m2")



@dataclass(frozen=True)
class InstrCost:
    """The static cost of one instruction on one target.

    Attributes:
        engine: ``tensor`` | ``vector`` | ``scalar`` | ``gpsimd`` | ``dma`` | ``none``.
        cycles: compute occupancy in engine cycles (0 for dma / none).
        ns: ``cycles / clock_ghz(engine)`` (0 for dma / none).
        flops: matmul FLOPs ``2 * K * M * N`` (0 otherwise, and 0 for transposes).
        peak_flops_per_ns: the dtype's TensorE peak, for MFU (0 for non-matmuls).
        dma: the :class:`DmaShape` of a DMA, else None.
        label: the memref operands, e.g. ``dst=128x512xf32@psum stationary=128x128xbf16@sbuf``.
        moving_free: matmul moving free size N (None otherwise).
    """

    engine: str
    cycles: float
    ns: float
    flops: float
    peak_flops_per_ns: float
    dma: DmaShape | None
    label: str
    moving_free: int | None


# ------------------------------------------------------------------------------- engine


def resolve_engine(op: Operation) -> str:
    """The engine kind ``op`` occupies: ``nkim.queue`` (``dma*`` -> ``dma``), else its
    ``engine`` property, else its definition's default engine
    (``vector`` for other instructions);
    ``none`` for :data:`NO_COST_OPS`, non-``nisa`` ops and the ``sync`` queue."""
    name = op.name
    if name in NO_COST_OPS or not name.startswith("nisa."):
        return "none"
    defn = getattr(op, "DEFINITION", None)  # an instruction definition: its cost row and engine
    kind = getattr(defn.cost, "kind", None) if defn is not None else None
    if kind in ENGINE_KINDS:
        return kind
    if name in DMA_OPS or name.startswith("nisa.dma") or isinstance(getattr(defn, "cost", None), Dma):
        return "dma"
    for where in (op.attributes.get("nkim.queue"), op.properties.get("engine"),
                  op.attributes.get("engine")):
        if isinstance(where, StringAttr):
            word = where.data
            if word in CLOCKED_ENGINES:
                return word
            if word.startswith("dma"):
                return "dma"
            if word == "sync":
                return "none"
    return defn.engine.default if defn is not None else "vector"


# ------------------------------------------------------------------------ compute costs


def _cycles(engine: str, model: TargetModel, n: float, *, k: float = 1.0, pm: float = 1.0,
            sbf: float = 1.0, gp: float | None = None, extra: float = 0.0) -> float:
    """``n`` elements per partition, ``k`` reads per element (A.6 per-engine forms)."""
    ii = model.min_ii_cycles
    if engine == "vector":
        return max(ii, k * n / pm) + extra
    if engine == "scalar":
        return max(ii, k * n / sbf) + extra
    if engine == "gpsimd":
        return model.gpsimd_start_cycles + (k if gp is None else gp) * n + extra
    if engine == "tensor":
        return max(ii, k * n) + extra
    return 0.0


def _penalty(tiles: list[Tile], model: TargetModel) -> float:
    """``strided_penalty`` if an SBUF read's innermost stride is over 16 bytes (ARCH2)."""
    for t in tiles:
        if not t.is_write and t.space == "sbuf" and t.innermost_stride_bytes() > 16:
            return model.strided_penalty
    return 1.0


def _sbf(model: TargetModel, t: Tile | None) -> float:
    return model.scalar_bf16_factor if t is not None and t.dtype in _SCALAR_FAST else 1.0


def _two_byte(t: Tile | None) -> bool:
    return t is not None and t.dtype in _TWO_BYTE_FLOAT


def _copy_pm(model: TargetModel, main: Tile | None, dst: Tile | None) -> float:
    """VectorE perf mode of a copy-like op: 4x (v3) when its data operands are bf16/fp16,
    contiguous, SBUF->SBUF; 2x for other bf16 cases; else 1 (ARCH3)."""
    data = [t for t in (main, dst) if t is not None]
    if data and all(_two_byte(t) and t.space == "sbuf" and t.contiguous() for t in data):
        return model.vector_perf_mode_copy
    if _two_byte(main):
        return model.vector_perf_mode_other
    return 1.0


def _other_pm(model: TargetModel, main: Tile | None) -> float:
    return model.vector_perf_mode_other if _two_byte(main) else 1.0


def _reduce_extra(model: TargetModel, tiles: list[Tile]) -> float:
    return float(model.min_ii_cycles) if role_of(tiles, "reduce_res") is not None else 0.0


def _prop(op: Operation, name: str) -> str | None:
    a = op.properties.get(name)
    return a.data if isinstance(a, StringAttr) else None


def _flag(op: Operation, name: str) -> bool:
    a = op.properties.get(name)
    return isinstance(a, IntegerAttr) and bool(a.value.data)


#: one-stream ops: op -> (main operand roles, k, perf class, gpsimd k (None: = k)); perf
#: class "copy" (copy perf mode), "other" (bf16 -> pm_other) or None (no perf mode).
#: ``+MIN_II`` whenever a ``reduce_res`` is written.
_SIMPLE: dict[str, tuple[tuple[str, ...], float, str | None, float | None]] = {
}


def _compute_cycles(op: Operation, engine: str, tiles: list[Tile],
                    model: TargetModel) -> tuple[float, float, float, int | None]:
    """``(cycles, flops, peak_flops_per_ns, moving_free)`` of a compute instruction."""
    name = op.name
    pen = _penalty(tiles, model)
    extra = _reduce_extra(model, tiles)
    formula = _defined_formula(op)
    if formula is not None:
        return _FORMULAS[formula](op, engine, tiles, model, pen)
    spec = _SIMPLE.get(name) or _defined_row(op)
    if spec is None:  # an instruction without a formula: one stream over its largest operand
        main = max(tiles, key=lambda t: t.free, default=None)
        return _cycles(engine, model, pen * (main.free if main else 1)), 0.0, 0.0, None
    roles, k, perf, gp = spec
    main = role_of(tiles, *roles)
    n = pen * (main.free if main else 1)
    pm = 1.0
    if perf == "copy":
        pm = _copy_pm(model, main, role_of(tiles, "dst") if roles != ("dst",) else None)
    elif perf == "other":
        pm = _other_pm(model, main)
    return _cycles(engine, model, n, k=k, pm=pm, sbf=_sbf(model, main), gp=gp,
                   extra=extra), 0.0, 0.0, None


def _defined_row(op: Operation) -> tuple | None:
    """The one-stream row of an op generated from an instruction definition, else None."""
    defn = getattr(op, "DEFINITION", None)
    return defn.cost.row if defn is not None else None


def _defined_formula(op: Operation) -> str | None:
    """The formula an instruction definition names for its op (a ``Formula`` cost), else None."""
    defn = getattr(op, "DEFINITION", None)
    return getattr(defn.cost, "kind", None) if defn is not None else None


def _two_input(roles: tuple[str, str], pm2: bool, engine: str, tiles: list[Tile],
               model: TargetModel, pen: float, extra: float) -> float:
    """tensor_tensor family: ``max(MIN_II, 2N/pm2)``, ``N`` with a PSUM input (ISA_OLD; A.6);
    ``pm2``: bf16 inputs in SBUF get ``vector_perf_mode_other`` (ARCH3)."""
    ra, rb = roles
    a, b = role_of(tiles, ra), role_of(tiles, rb)
    dst = role_of(tiles, "dst")
    main = a or dst or b
    n = pen * (main.free if main else 1)
    inputs = [t for t in (a, b) if t is not None]
    k = 2.0 if len(inputs) == 2 else 1.0
    if any(t.space == "psum" for t in inputs):
        k = 1.0
    pm = 1.0
    if (pm2 and k == 2.0
            and all(_two_byte(t) and t.space == "sbuf" for t in inputs)
            and (dst is None or dst.space == "sbuf")):
        pm = model.vector_perf_mode_other  # ARCH3: 2x bf16 tensor_tensor in SBUF
    return _cycles(engine, model, n, k=k, pm=pm, sbf=_sbf(model, main), extra=extra)


def _matmul(op: Operation, tiles: list[Tile], model: TargetModel,
            pen: float) -> tuple[float, float, float, int | None]:
    st, mv = role_of(tiles, "stationary"), role_of(tiles, "moving")
    if st is None or mv is None:
        return float(model.mm_min_cycles), 0.0, 0.0, None
    k = st.shape[0]
    if _flag(op, "is_transpose"):  # bit-exact transpose of stationary (moving = identity)
        m = st.free
        return float(max(k, min(model.min_ii_cycles, m))), 0.0, 0.0, mv.free
    double = _prop(op, "perf_opt") == "double_row"
    if double and len(st.shape) >= 3 and len(mv.shape) >= 3:
        m, n, k_eff = st.shape[-1], mv.shape[-1], 2 * k
        n_cycles = mv.free * model.mm_fp8_factor  # [K, 2, N]: two fp8 rows per pass
    else:
        m, n, k_eff = st.free, mv.free, k
        n_cycles = float(n)
    fp32 = "float32" in (st.dtype, mv.dtype)
    factor = float(model.mm_fp32_factor) if fp32 else 1.0
    # MM interval max(N_moving, 64) x dtype factor (ARCH2); LoadStationary ~M/4, hidden (Opt #7)
    cycles = max(factor * max(pen * n_cycles, model.mm_min_cycles), m / 4.0)
    kind = "fp32" if fp32 else "fp8" if (st.dtype in _FP8 and mv.dtype in _FP8) else "bf16"
    flops = 2.0 * k_eff * m * n
    return cycles, flops, model.peak_matmul_flops_per_ns(kind), n


def _matmul_mx(op: Operation, engine: str, tiles: list[Tile], model: TargetModel,
               pen: float) -> tuple[float, float, float, int | None]:
    st, mv = role_of(tiles, "stationary"), role_of(tiles, "moving")
    if st is None or mv is None:
        return float(model.mm_min_cycles), 0.0, 0.0, None
    k, m, n = st.shape[0], st.free, mv.free
    cycles = max(max(pen * n, model.mm_min_cycles), m / 4.0)
    flops = 2.0 * (4 * k) * m * n  # 4 values per packed element along the contraction
    return cycles, flops, model.peak_matmul_flops_per_ns("mx"), n


def _two_input_formula(op: Operation, engine: str, tiles: list[Tile], model: TargetModel,
                       pen: float) -> tuple[float, float, float, int | None]:
    """A definition's ``Formula("two_input", roles, perf)``: :func:`_two_input` over its
    roles, with the bf16 perf mode when ``perf == "other"``."""
    f = op.DEFINITION.cost
    return (_two_input(f.roles, f.perf == "other", engine, tiles, model, pen,
                       _reduce_extra(model, tiles)), 0.0, 0.0, None)


def _tensor_reduce(op: Operation, engine: str, tiles: list[Tile], model: TargetModel,
                   pen: float) -> tuple[float, float, float, int | None]:
    """tensor_reduce: one stream over the source, ``pm_other`` for bf16, at least 2x for a
    bf16 add / max (ISA_OLD: N/2)."""
    src = role_of(tiles, *op.DEFINITION.cost.roles)
    n = pen * (src.free if src else 1)
    pm = _other_pm(model, src)
    if _two_byte(src) and _prop(op, "op") in ("add", "max"):
        pm = max(pm, 2.0)  # ISA_OLD: tensor_reduce bf16 add/max takes N/2
    return _cycles(engine, model, n, pm=pm, sbf=_sbf(model, src)), 0.0, 0.0, None


def _reciprocal(op: Operation, engine: str, tiles: list[Tile], model: TargetModel,
                pen: float) -> tuple[float, float, float, int | None]:
    """reciprocal: vector ``8N``, scalar ``N``, gpsimd ``150 + 4N`` (ISA_OLD, SHARED)."""
    src = role_of(tiles, *op.DEFINITION.cost.roles)
    n = pen * (src.free if src else 1)
    k = 8.0 if engine == "vector" else 1.0  # ScalarE does it in N (ISA_OLD, SHARED)
    return _cycles(engine, model, n, k=k, sbf=_sbf(model, src), gp=4.0), 0.0, 0.0, None


def _exponential(op: Operation, engine: str, tiles: list[Tile], model: TargetModel,
                 pen: float) -> tuple[float, float, float, int | None]:
    """exponential: VectorE exp has 4x the throughput of ScalarE exp, ``sbf`` elements per
    lane per cycle at the ScalarE clock (ARCH4); ``+MIN_II`` reading out ``reduce_res``."""
    src = role_of(tiles, *op.DEFINITION.cost.roles)
    n = pen * (src.free if src else 1)
    extra = _reduce_extra(model, tiles)
    rate = 4.0 * _sbf(model, src) * model.scalar_ghz / model.clock_ghz(engine) \
        if engine in CLOCKED_ENGINES else 1.0
    if engine == "vector":
        return max(model.min_ii_cycles, n / rate) + extra, 0.0, 0.0, None
    return _cycles(engine, model, n, sbf=_sbf(model, src), extra=extra), 0.0, 0.0, None


def _transpose(op: Operation, engine: str, tiles: list[Tile], model: TargetModel,
               pen: float) -> tuple[float, float, float, int | None]:
    """``Formula("transpose", roles=(data,))``: on the Tensor engine ``max(P, min(MIN_II,
    F))`` (ISA_OLD), elsewhere one stream over ``F`` (analogue: tensor_copy)."""
    data = role_of(tiles, *op.DEFINITION.cost.roles)
    if engine == "tensor" and data is not None:
        return float(max(data.shape[0], min(model.min_ii_cycles, data.free))), 0.0, 0.0, None
    return _cycles(engine, model, pen * (data.free if data else 1)), 0.0, 0.0, None


#: the formulas a definition's ``Formula`` cost may name: ``f(op, engine, tiles, model,
#: strided penalty) -> (cycles, flops, peak_flops_per_ns, moving_free)``
_FORMULAS = {"matmul": lambda op, engine, tiles, model, pen: _matmul(op, tiles, model, pen),
             "matmul_mx": _matmul_mx, "two_input": _two_input_formula, "transpose": _transpose,
             "exponential": _exponential, "tensor_reduce": _tensor_reduce,
             "reciprocal": _reciprocal,
             "empty": lambda op, engine, tiles, model, pen: (_cycles(engine, model, 0.0), 0.0,
                                                             0.0, None)}


# ---------------------------------------------------------------------- dynamic offsets


#: the op reading a register's value (``nki_mlir/instructions/registers.py``)
_REGISTER_READ = "nisa.register_read"


def _register_derived(v: SSAValue, depth: int = 0) -> bool:
    """Whether ``v`` is computed (through arith / index ops) from a ``nisa.register_read``,
    or is the induction value of a runtime loop (``scf.while``, or an ``scf.for`` whose
    bounds come from a register)."""
    if depth > 8:
        return False
    if isinstance(v, BlockArgument):
        loop = v.owner.parent_op() if isinstance(v.owner, Block) else None
        if loop is None:
            return False
        if loop.name == "scf.while":
            return True
        return loop.name == "scf.for" and any(_register_derived(x, depth + 1)
                                              for x in loop.operands[:3])
    if not isinstance(v, OpResult):
        return False
    owner = v.op
    if owner.name == _REGISTER_READ:
        return True
    if owner.name.startswith("nisa.") or owner.regions:
        return False
    return any(_register_derived(x, depth + 1) for x in owner.operands)


def _dynamic_offset(tiles: list[Tile]) -> bool:
    """An operand is a view whose offsets come from a register (a runtime offset)."""
    for t in tiles:
        v = t.value
        hops = 0
        while isinstance(v, OpResult) and is_view(v.op) and hops < 16:
            if any(_register_derived(x) for x in v.op.operands[1:]):
                return True
            v = v.op.operands[0]
            hops += 1
    return False


# --------------------------------------------------------------------------------- entry


def instruction_cost(op: Operation, model: TargetModel) -> InstrCost:
    """The static cost of ``op`` on ``model``'s target (see the module table).

    Never raises on valid IR: an op it cannot analyse gets a conservative cost (one
    ``MIN_II`` or a one-engine DMA) on its engine.  Non-instruction ops (control flow,
    views, ``nisa.alloc``) cost nothing on engine ``none``.
    """
    engine = "none"
    try:
        engine = resolve_engine(op)
        if engine == "none":
            tiles = tiles_of(op) if op.name.startswith("nisa.") else []
            return InstrCost("none", 0.0, 0.0, 0.0, 0.0, None, label_of(tiles), None)
        tiles = tiles_of(op)
        label = label_of(tiles)
        if engine == "dma":
            return InstrCost("dma", 0.0, 0.0, 0.0, 0.0, dma_shape(op, tiles), label, None)
        cycles, flops, peak, moving = _compute_cycles(op, engine, tiles, model)
        if _dynamic_offset(tiles):
            cycles = max(cycles, float(model.dynamic_copy_cycles))
        return InstrCost(engine, cycles, cycles / model.clock_ghz(engine), flops, peak, None,
                         label, moving)
    except Exception:  # unusual but valid IR: keep going with a conservative cost
        return _fallback(op, model, engine)


#: label of a cost the formulas could not derive (the estimate lists such ops in its notes)
FALLBACK_LABEL = "(fallback cost: operands not understood)"


def _fallback(op: Operation, model: TargetModel, engine: str) -> InstrCost:
    if engine == "none":
        return InstrCost("none", 0.0, 0.0, 0.0, 0.0, None, "", None)
    sizes = []
    for v in op.operands:
        t = v.type
        if isinstance(t, MemRefType):
            shape = [max(int(d), 1) for d in t.get_shape()]
            sizes.append((math.prod(shape), math.prod(shape[1:]) if len(shape) > 1 else 1))
    if engine == "dma":
        total = 4 * max((s[0] for s in sizes), default=0)
        shape = DmaShape(total, total, 1, total, max(1, min(total, int(model.dma_eff_knee_bytes))),
                         0, False, False)
        return InstrCost("dma", 0.0, 0.0, 0.0, 0.0, shape, FALLBACK_LABEL, None)
    n = max((s[1] for s in sizes), default=1)
    cycles = _cycles(engine, model, float(n))
    return InstrCost(engine, cycles, cycles / model.clock_ghz(engine), 0.0, 0.0, None, FALLBACK_LABEL,
                     None)
