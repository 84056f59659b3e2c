"""Per-target facts: the one place that knows what differs between NeuronCore generations.

A target is ``trn1`` (NeuronCore-v2, also named ``inf2`` / ``gen2``), ``trn2`` (NeuronCore-v3,
``gen3``) or ``trn3`` (NeuronCore-v4, ``gen4``).  This leaf module (it imports only
:mod:`nki_mlir.errors`) holds, per target:

- names: :data:`TARGETS`, :data:`ALIASES`, :data:`DEFAULT`, :data:`GENERATION`
  (``nki.isa.nc_version``) and :func:`resolve_target` / :func:`canonical`;
- memory: :data:`PARTITIONS`, :data:`SBUF_BYTES` (physical bytes per partition, the
  interpreter's SBUF), :data:`SBUF_USABLE_BYTES` (what the allocator may place:
  ``nl.tile_size.total_available_sbuf_size``), the PSUM banks (:data:`PSUM_BANKS` x
  :data:`PSUM_BANK_BYTES`) and the TensorE tile limits (:data:`MOVING_FMAX`);
- the cost model's constants: one :class:`TargetModel` per target (:data:`MODELS`), each
  value with its source in :data:`SOURCES`.

Adding a target is adding its entries here (see docs/architecture.md).

Sources: the NKI architecture guides (nki/guides/architecture) of Trainium/Inferentia2,
Trainium2 and Trainium3 (short names ``ARCH2`` / ``ARCH3`` / ``ARCH4`` below), the
``nki.isa`` API pages with "Estimated instruction cost" notes (release 2.26: ``ISA_OLD``),
the NKI DMA bandwidth guide / overview (``DMABW`` / ``DMAOV``) and the Neuron Explorer
summary page (``SUMMARY``); :data:`SOURCES` says for every field of every target whether it
is stated there (``[doc]``) or derived from stated numbers (``[inf]``).

Units: clocks in GHz (= cycles per ns), bandwidths in bytes per ns (= GB/s), latencies in
ns, costs in engine cycles, sizes in bytes.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields

from .errors import NKIError

# ------------------------------------------------------------------------------ names

#: the targets, oldest first
TARGETS = ("trn1", "trn2", "trn3")
#: the target of a compile that names none (and of a module without ``nisa.target``)
DEFAULT = "trn2"
#: every accepted spelling of a target -> its name
ALIASES = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2",
           "trn3": "trn3", "gen4": "trn3"}
#: NeuronCore generation of each target (trn1 = NC-v2, ...; ``nki.isa.nc_version.gen<N>``)
GENERATION = {"trn1": 2, "trn2": 3, "trn3": 4}
#: the environment variable naming the target when the compile does not
TARGET_ENV = "NEURON_PLATFORM_TARGET_OVERRIDE"


def canonical(name: object) -> str | None:
    """The target ``name`` spells (``"gen3"`` -> ``"trn2"``), or None if it is not one."""
    return ALIASES.get(name) if isinstance(name, str) else None


def resolve_target(target: str | None = None) -> str:
    """The target of a compile: ``target``, else ``$NEURON_PLATFORM_TARGET_OVERRIDE``, else
    :data:`DEFAULT`; aliases resolved.

    Raises:
        NKIError: (category ``bad option``) not a known target or alias.
    """
    t = target or os.environ.get(TARGET_ENV) or DEFAULT
    name = canonical(t)
    if name is None:
        raise NKIError(f"unknown target {t!r}; use one of trn1, trn2, trn3 (or inf2/gen2/gen3/gen4)",
                       category="bad option")
    return name


# ----------------------------------------------------------------------------- memory

#: partitions of SBUF and PSUM (``nl.tile_size.pmax``)
PARTITIONS = 128
#: physical SBUF bytes per partition (ARCH2: 24 MiB = 128 x 192 KiB; ARCH3: 28 MiB = 128 x
#: 224 KiB; ARCH4: 32 MiB / 128 = 256 KiB)
SBUF_BYTES = {"trn1": 192 * 1024, "trn2": 224 * 1024, "trn3": 256 * 1024}
#: SBUF bytes per partition a kernel may use (``nl.tile_size.total_available_sbuf_size``)
SBUF_USABLE_BYTES = {"trn1": 180224, "trn2": 212984, "trn3": 245752}
#: PSUM banks per partition and bytes per bank (ARCH2/3/4: PSUM 2 MiB = 128 x 16 KiB)
PSUM_BANKS = 8
PSUM_BANK_BYTES = 2048
#: PSUM bytes per partition
PSUM_BYTES = PSUM_BANKS * PSUM_BANK_BYTES
#: max moving free size of ``nc_matmul`` (fp32 elements of one PSUM bank's output)
MOVING_FMAX = {"trn1": 512, "trn2": 512, "trn3": 4096}
#: max stationary free size of ``nc_matmul`` (TensorE columns)
STATIONARY_FMAX = 128
#: physical NeuronCores one logical NeuronCore may span (LNC2 on trn2/trn3; ``nl.nc`` grids)
LNC_CORES = {"trn1": 1, "trn2": 2, "trn3": 2}


# ------------------------------------------------------------------------- cost model

#: compute engines with a clock (``clock_ghz``)
CLOCKED_ENGINES = ("tensor", "vector", "scalar", "gpsimd")
#: matmul dtype kinds of :meth:`TargetModel.peak_matmul_flops_per_ns`
MATMUL_KINDS = ("bf16", "fp16", "tf32", "fp8", "fp32", "mx")


@dataclass(frozen=True)
class TargetModel:
    """The constants of one NeuronCore generation (see the module docstring for units).

    Attributes:
        name: ``trn1`` | ``trn2`` | ``trn3``.
        tensor_ghz, vector_ghz, scalar_ghz, gpsimd_ghz: engine clocks (GHz).
        pe_rows, pe_cols: TensorE systolic array (processing elements).
        mm_min_cycles: a matmul occupies TensorE ``max(N_moving, mm_min_cycles)`` cycles.
        mm_fp32_factor: cycles multiplier of an fp32 matmul (1/4 rate).
        mm_fp8_factor: cycles multiplier per moving free element of an fp8 ``double_row``
            matmul (two fp8 rows per PE pass; 1.0 where fp8 gets no speedup).
        mm_mx_factor: FLOP-rate divisor of an MX (``nc_matmul_mx``) matmul: its peak is
            ``1 / mm_mx_factor`` times the BF16 peak (1.0 where MX does not exist).
        min_ii_cycles: compute-engine minimum initiation interval (cycles).
        static_dep_cycles: extra cycles of a small instruction that reads the previous
            instruction's output on the same engine (applied by the timeline, not here).
        gpsimd_start_cycles: GpSimd start-up cycles before ~1 element/cycle.
        dynamic_copy_cycles: minimum cycles of a copy with a runtime (register) offset.
        vector_perf_mode_copy: VectorE speedup of a bf16/fp16 contiguous SBUF->SBUF
            ``tensor_copy`` / ``tensor_scalar``.
        vector_perf_mode_other: VectorE speedup of other bf16/fp16 cases (bf16
            ``tensor_tensor`` in SBUF, ...).
        scalar_bf16_factor: ScalarE speedup for bf16/fp16/fp8 inputs.
        strided_penalty: slowdown of an SBUF read whose innermost stride is over 16 bytes.
        dma_engines: DMA engines per NeuronCore.
        dma_partitions_per_engine: SBUF partitions served by one DMA engine.
        dma_bytes_per_ns: achievable bandwidth of one DMA engine (bytes/ns).
        dma_fixed_ns: fixed latency of one DMA (semaphore to start, descriptors), ns.
        dma_eff_knee_bytes: ``eff(b) = b / (b + knee)`` for ``b`` contiguous bytes per row.
        dma_transpose_eff_hbm, dma_transpose_eff_sbuf: throughput fraction of a DMA
            transpose from HBM / from SBUF.
        hbm_bytes_per_ns: HBM bandwidth per NeuronCore (chip bandwidth / cores), bytes/ns.
        throttle_ramp_ns: TensorE power-throttle ramp (0 = no throttling modelled).
        sbuf_bytes_per_partition: SBUF bytes per partition (reference only).
        psum_bytes_per_partition: PSUM bytes per partition (reference only).
    """

    name: str
    tensor_ghz: float
    vector_ghz: float
    scalar_ghz: float
    gpsimd_ghz: float
    mm_fp8_factor: float
    mm_mx_factor: float
    vector_perf_mode_copy: float
    vector_perf_mode_other: float
    scalar_bf16_factor: float
    dma_bytes_per_ns: float
    hbm_bytes_per_ns: float
    throttle_ramp_ns: float
    sbuf_bytes_per_partition: int
    pe_rows: int = 128
    pe_cols: int = 128
    mm_min_cycles: int = 64
    mm_fp32_factor: int = 4
    min_ii_cycles: int = 64
    static_dep_cycles: int = 100
    gpsimd_start_cycles: int = 150
    dynamic_copy_cycles: int = 600
    strided_penalty: float = 2.0
    dma_engines: int = 16
    dma_partitions_per_engine: int = 8
    dma_fixed_ns: float = 1300.0
    dma_eff_knee_bytes: float = 1024.0
    dma_transpose_eff_hbm: float = 0.9
    dma_transpose_eff_sbuf: float = 0.5
    psum_bytes_per_partition: int = PSUM_BYTES

    def matmul_factor(self, dtype_kind: str) -> float:
        """TensorE cycles multiplier of a matmul of ``dtype_kind`` (see :data:`MATMUL_KINDS`;
        ``fp8`` = double-row fp8, ``mx`` = MXFP8/MXFP4).  Raises ValueError for other kinds."""
        if dtype_kind in ("bf16", "fp16", "tf32"):
            return 1.0
        if dtype_kind == "fp32":
            return float(self.mm_fp32_factor)
        if dtype_kind == "fp8":
            return self.mm_fp8_factor
        if dtype_kind == "mx":
            return self.mm_mx_factor
        raise ValueError(f"unknown matmul dtype kind {dtype_kind!r}; expected one of "
                         f"{', '.join(MATMUL_KINDS)}")

    def peak_matmul_flops_per_ns(self, dtype_kind: str) -> float:
        """TensorE peak FLOPs per ns for ``dtype_kind``: ``2 * pe_rows * pe_cols * tensor_ghz /
        factor`` (trn2 bf16: 2*128*128*2.4 = 78643 FLOP/ns = 78.6 TFLOPS, ARCH3)."""
        return 2.0 * self.pe_rows * self.pe_cols * self.tensor_ghz / self.matmul_factor(dtype_kind)

    def clock_ghz(self, engine: str) -> float:
        """Clock (GHz = cycles per ns) of ``engine`` (tensor / vector / scalar / gpsimd).
        Raises ValueError for engines without a clock (dma, none)."""
        if engine not in CLOCKED_ENGINES:
            raise ValueError(f"engine {engine!r} has no clock; expected one of "
                             f"{', '.join(CLOCKED_ENGINES)}")
        return getattr(self, f"{engine}_ghz")


#: the cost model's constants of each target
MODELS: dict[str, TargetModel] = {
    "trn1": TargetModel(
        name="trn1", tensor_ghz=2.8, vector_ghz=1.12, scalar_ghz=1.4, gpsimd_ghz=1.4,
        mm_fp8_factor=1.0, mm_mx_factor=1.0, vector_perf_mode_copy=1.0,
        vector_perf_mode_other=1.0, scalar_bf16_factor=1.0, dma_bytes_per_ns=17.0,
        hbm_bytes_per_ns=410.0, throttle_ramp_ns=0.0, sbuf_bytes_per_partition=SBUF_BYTES["trn1"]),
    "trn2": TargetModel(
        name="trn2", tensor_ghz=2.4, vector_ghz=0.96, scalar_ghz=1.2, gpsimd_ghz=1.2,
        mm_fp8_factor=0.5, mm_mx_factor=1.0, vector_perf_mode_copy=4.0,
        vector_perf_mode_other=2.0, scalar_bf16_factor=1.0, dma_bytes_per_ns=23.0,
        hbm_bytes_per_ns=362.0, throttle_ramp_ns=3000.0, sbuf_bytes_per_partition=SBUF_BYTES["trn2"]),
    "trn3": TargetModel(
        name="trn3", tensor_ghz=2.4, vector_ghz=1.2, scalar_ghz=1.2, gpsimd_ghz=1.2,
        mm_fp8_factor=0.5, mm_mx_factor=0.25, vector_perf_mode_copy=4.0,
        vector_perf_mode_other=2.0, scalar_bf16_factor=2.0, dma_bytes_per_ns=33.0,
        hbm_bytes_per_ns=610.0, throttle_ramp_ns=3000.0, sbuf_bytes_per_partition=SBUF_BYTES["trn3"]),
}


def _same(text: str) -> dict[str, str]:
    return {t: text for t in TARGETS}


#: target -> field -> where the value comes from (see the module docstring)
SOURCES: dict[str, dict[str, str]] = {t: {"name": f"target name ({t})"} for t in TARGETS}

_BY_FIELD: dict[str, dict[str, str]] = {
    "tensor_ghz": {"trn1": "[doc] ARCH2 engine table: TensorE 2.8 GHz",
                   "trn2": "[doc] ARCH3 engine table: TensorE 2.4 GHz",
                   "trn3": "[doc] ARCH4 engine table: TensorE 2.4 GHz"},
    "vector_ghz": {"trn1": "[doc] ARCH2 engine table: VectorE 1.12 GHz",
                   "trn2": "[doc] ARCH3 engine table: VectorE 0.96 GHz",
                   "trn3": "[doc] ARCH4 engine table: VectorE 1.2 GHz"},
    "scalar_ghz": {"trn1": "[doc] ARCH2 engine table: ScalarE 1.4 GHz",
                   "trn2": "[doc] ARCH3 engine table: ScalarE 1.2 GHz",
                   "trn3": "[doc] ARCH4 engine table: ScalarE 1.2 GHz"},
    "gpsimd_ghz": {"trn1": "[doc] ARCH2 engine table: GpSimdE 1.4 GHz",
                   "trn2": "[doc] ARCH3 engine table: GpSimdE 1.2 GHz",
                   "trn3": "[doc] ARCH4 engine table: GpSimdE 1.2 GHz"},
    "mm_fp8_factor": {
        "trn1": "[doc] ARCH2: cFP8 gets no TensorE speedup on NeuronCore-v2",
        "trn2": "[doc] ARCH3 'Double FP8' (double_row): 158 vs 79 TFLOPS, 2 fp8 rows per pass",
        "trn3": "[inf] double_row packs 2 fp8 rows as on v3 (ARCH3 'Double FP8'); "
                "ARCH4's quad rate is MX only (mm_mx_factor)"},
    "mm_mx_factor": {
        "trn1": "[doc] ARCH2: no MX types on NeuronCore-v2 (1.0 = not applicable)",
        "trn2": "[doc] ARCH3: no MX types on NeuronCore-v3 (1.0 = not applicable)",
        "trn3": "[doc] ARCH4 'Quad-MXFP8': 315 MXFP8/MXFP4 TFLOPS = 4 x 79 (8x128 input)"},
    "vector_perf_mode_copy": {
        "trn1": "[doc] ARCH2 VectorE: 128 lanes x 1 elem/cycle, no perf mode",
        "trn2": "[doc] ARCH3 'Vector Engine Performance Mode': 4x bf16/fp16 contiguous "
                "SBUF->SBUF tensor_copy/tensor_scalar",
        "trn3": "[inf] ARCH4 engine table: VectorE 512 elem/cycle bf16/fp16/fp8, the v3 "
                "perf-mode width (ARCH3)"},
    "vector_perf_mode_other": {
        "trn1": "[doc] ARCH2 VectorE: 128 lanes x 1 elem/cycle, no perf mode",
        "trn2": "[doc] ARCH3 'Vector Engine Performance Mode': 2x other bf16 cases, bf16 "
                "tensor_tensor in SBUF",
        "trn3": "[inf] ARCH4 engine table: VectorE 256 elem/cycle other cases, as v3 (ARCH3)"},
    "scalar_bf16_factor": {
        "trn1": "[doc] ARCH2 ScalarE: 128 elem/cycle",
        "trn2": "[doc] ARCH3 ScalarE: 128 elem/cycle",
        "trn3": "[doc] ARCH4 engine table: ScalarE 256 elem/cycle bf16/fp16/fp8, 128 other"},
    "dma_bytes_per_ns": {
        "trn1": "[doc] DMABW table: 17 B/ns achievable per DMA engine (NC-v2)",
        "trn2": "[doc] DMABW/DMAOV tables: 23 B/ns per DMA engine; DMAOV Example 1 "
                "(32 KiB in 1416 ns = 23.1 B/ns)",
        "trn3": "[doc] DMABW/DMAOV tables: 33 B/ns per DMA engine (NC-v4)"},
    "hbm_bytes_per_ns": {
        "trn1": "[inf] 820 GB/s chip (trainium.rst) / 2 cores = 410 GB/s",
        "trn2": "[inf] 2.9 TB/s chip (trainium2.rst) / 8 cores = 362 GB/s",
        "trn3": "[inf] 4.9 TB/s chip (trainium3.rst) / 8 cores = 612 ~ 610 GB/s"},
    "throttle_ramp_ns": {
        "trn1": "[doc] SUMMARY 'throttling' names trn2/trn3 only: no ramp modelled on trn1",
        "trn2": "[doc] SUMMARY 'throttling': ~50% utilisation ramping to full over ~3 us",
        "trn3": "[doc] SUMMARY 'throttling': ~50% utilisation ramping to full over ~3 us"},
    "sbuf_bytes_per_partition": {
        "trn1": "[doc] ARCH2: SBUF 24 MiB = 128 partitions x 192 KiB",
        "trn2": "[doc] ARCH3: SBUF 28 MiB = 128 partitions x 224 KiB",
        "trn3": "[inf] ARCH4: SBUF 32 MiB / 128 partitions = 256 KiB"},
    "pe_rows": _same("[doc] ARCH2/3/4: TensorE 128x128 systolic array"),
    "pe_cols": _same("[doc] ARCH2/3/4: TensorE 128x128 systolic array"),
    "mm_min_cycles": _same("[doc] ARCH2 TensorE cost model: MM interval max(N_moving, 64) "
                           "cycles (bf16/fp16/tf32/fp8); ISA_OLD nc_matmul"),
    "mm_fp32_factor": _same("[doc] ARCH2 TensorE cost model: x4 for FP32 (23 vs 92 TFLOPS; "
                            "ARCH3/ARCH4 20 vs 79)"),
    "min_ii_cycles": _same("[doc] ISA_OLD / SHARED 'Estimated cycles': MIN_II ~64 engine cycles"),
    "static_dep_cycles": _same("[doc] ARCH2 VectorE cost model: ~100 cycles static overhead "
                               "between dependent small instructions"),
    "gpsimd_start_cycles": _same("[doc] ISA_OLD iota/affine_select: GPSIMD_START ~150 cycles"),
    "dynamic_copy_cycles": _same("[doc] ISA_OLD tensor_copy_dynamic_*: MIN_II_DYNAMIC ~600 cycles"),
    "strided_penalty": _same("[doc] ARCH2 'Performance Consideration': half port rate when "
                             "the innermost stride is over 16 B"),
    "dma_engines": _same("[doc] ARCH2/ARCH3/DMAOV: 16 DMA engines per NeuronCore"),
    "dma_partitions_per_engine": _same("[doc] DMABW / PERF Opt #9: 8 partitions per engine "
                                       "lets all 16 engines work at P=128"),
    "dma_fixed_ns": _same("[doc] DMABW: ~1300 ns semaphore-to-start latency per DMA"),
    "dma_eff_knee_bytes": _same("[inf] fitted: eff(b)=b/(b+1024) puts the naive trn1 matmul "
                                "anchor (A.5, 51.80 ms) within 1%; consistent with the DMABW "
                                "size rule (<256 B/partition overhead-bound: 20%; 2 KiB "
                                "recommended: 67%; 4 KiB nearly saturates: 80%, 8 KiB: 89%). "
                                "an earlier 512 B knee gave -31% on that anchor; "
                                "bench/calibration.py checks held-out anchors"),
    "dma_transpose_eff_hbm": _same("[doc] ARCH3: DMA transpose HBM->SBUF up to ~90% of DMA "
                                   "throughput"),
    "dma_transpose_eff_sbuf": _same("[doc] ARCH3: DMA transpose SBUF->SBUF up to 50%"),
    "psum_bytes_per_partition": _same("[doc] ARCH2/ARCH3/ARCH4: PSUM 2 MiB = 128 partitions "
                                      "x 16 KiB"),
}
for _field, _by_target in _BY_FIELD.items():
    for _t, _text in _by_target.items():
        SOURCES[_t][_field] = _text

#: field -> unit, for :func:`constants_table`
UNITS: dict[str, str] = {
    "name": "", "tensor_ghz": "GHz", "vector_ghz": "GHz", "scalar_ghz": "GHz", "gpsimd_ghz": "GHz",
    "mm_fp8_factor": "x cycles", "mm_mx_factor": "x cycles", "vector_perf_mode_copy": "x rate",
    "vector_perf_mode_other": "x rate", "scalar_bf16_factor": "x rate", "dma_bytes_per_ns": "B/ns",
    "hbm_bytes_per_ns": "B/ns", "throttle_ramp_ns": "ns", "sbuf_bytes_per_partition": "bytes",
    "pe_rows": "PEs", "pe_cols": "PEs", "mm_min_cycles": "cycles", "mm_fp32_factor": "x cycles",
    "min_ii_cycles": "cycles", "static_dep_cycles": "cycles", "gpsimd_start_cycles": "cycles",
    "dynamic_copy_cycles": "cycles", "strided_penalty": "x cycles", "dma_engines": "engines",
    "dma_partitions_per_engine": "partitions", "dma_fixed_ns": "ns", "dma_eff_knee_bytes": "bytes",
    "dma_transpose_eff_hbm": "fraction", "dma_transpose_eff_sbuf": "fraction",
    "psum_bytes_per_partition": "bytes",
}


def target_model(name: str) -> TargetModel:
    """The :class:`TargetModel` of ``name`` (``trn1`` / ``trn2`` / ``trn3`` or an alias in
    :data:`ALIASES`: ``inf2``, ``gen2`` ... ``gen4``).

    Raises:
        NKIError: (category ``bad option``) ``name`` is not a known target.
    """
    key = canonical(name)
    if key is None:
        raise NKIError(f"unknown target {name!r}; use one of trn1, trn2, trn3 (or "
                       f"inf2/gen2/gen3/gen4)", category="bad option")
    return MODELS[key]


def constants_table(name: str) -> list[tuple[str, object, str, str]]:
    """Rows ``(field, value, unit, source)`` of every constant of target ``name`` in field
    order (for docs and ``nki-mlir profile --constants``).  Raises NKIError like
    :func:`target_model`."""
    model = target_model(name)
    return [(f.name, getattr(model, f.name), UNITS.get(f.name, ""), SOURCES[model.name][f.name])
            for f in fields(model)]
