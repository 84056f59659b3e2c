"""The compile driver: frontend -> pass pipeline -> artifact (cached) -> ISA interpreter.

``compile_kernel(fn, args, kwargs)`` is what ``@nki.jit`` calls: the frontend
(:func:`nki_mlir.frontend.build_module`) builds the ``nki`` module, the output-coverage check
runs on it, then the pass pipeline (:func:`.pipeline.run_pipeline`: the registry's default
pipeline, each pass followed by a check of what may remain at that stage).  The final
``nisa`` module is written as an artifact in the compile cache and decoded for the
interpreter (:class:`CompiledKernel`).

A compile for a program-order run (``stage="placed"``, what a kernel call uses unless
hazard checks are on: :func:`.schedule_stage.run_stage`) stops before ``nisa-schedule``:
such a run executes the instructions one at a time in program order and reads nothing the
schedule adds (engine queues, waits).  Everything that does -- queue-mode runs, hazard
checks, the cost model, :meth:`CompiledKernel.ir` / :meth:`~CompiledKernel.save` --
goes through :meth:`CompiledKernel.final`, which runs ``nisa-schedule`` on the placed module
once and caches the result as the kernel's full artifact (:mod:`.schedule_stage`).
"""
from __future__ import annotations

import functools
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from .. import dtypes, progress
from .. import instructions  # noqa: F401  (registers the instruction definitions with every layer)
from . import warm
from .frame_stack import on_fresh_stack
from ..diagnostics import caller_loc
from ..dialects.instruction import cross_core_ops
from ..errors import ArtifactError, NKIError, NKITypeError
from ..frontend import ArgSpec, KernelSpec, OutputSpec, arg_specs, build_module
from ..frontend.source import FunctionSource, file_hash, referenced_values_digest, value_digest
from ..passes import output_coverage
from ..runtime import artifact as art
from ..runtime import cache
from ..runtime.gc_pause import no_cyclic_gc
from ..targets import resolve_target
from ..version import __version__
from .pipeline import PLACED, PROGRESS_STEPS, ir_dumper, parse_module, print_module, run_pipeline
from ..passes.output_deps import check_module

#: ``compile_kernel(stage=...)``: the whole pipeline, or up to ``nisa-schedule`` (module docstring)
STAGES = ("final", "placed")

#: a compile shows a progress bar (on a terminal) when the frontend made this many ops
PROGRESS_MIN_OPS = 5000


# --------------------------------------------------------------------- compiled kernel


@dataclass
class CompiledKernel:
    """A kernel compiled for one set of argument shapes/dtypes/constants.

    Attributes:
        spec: the argument and output specs.
        artifact: path of the artifact directory in the compile cache (manifest.json +
            kernel.nisa.mlir), or None for a ``use_cache=False`` compile, whose artifact is
            kept in memory (write it with :meth:`save`).
        target: "trn1" | "trn2" | "trn3".
        compile_seconds: wall time of the compile that produced it (0 for a cache hit).
        cache_hit: "memory", "disk" or None.

    A compile of stage ``"placed"`` (``manifest["stage"]``; see the module docstring) runs
    in program order as it is; :meth:`final` gives its scheduled kernel.
    """

    spec: KernelSpec
    artifact: Path | None
    target: str
    manifest: dict[str, Any]
    compile_seconds: float = 0.0
    cache_hit: str | None = None
    _ir: dict[str, str] = field(default_factory=dict)
    _program: Any = None
    _module: Any = None     # the nisa module of a compile in this process, until decoded
    _final: Any = None      # a placed compile's scheduled kernel, once made (final())

    @property
    def stage(self) -> str:
        """``"final"`` (the whole pipeline) or ``"placed"`` (stopped before ``nisa-schedule``)."""
        return self.manifest.get("stage", "final")

    def final(self) -> CompiledKernel:
        """The kernel after the whole pipeline: ``self``, or for a placed compile its
        scheduled kernel (made once: ``nisa-schedule`` on the placed module, cached like a
        compile; :func:`.schedule_stage.finish`).

        Raises:
            NKIError: a diagnostic of ``nisa-schedule``, located at the kernel line.
        """
        if self.stage == "final":
            return self
        if self._final is None:
            from .schedule_stage import finish
            self._final = finish(self, _disk_hit)
        return self._final

    def ir(self, stage: str = "nisa") -> str:
        """The IR text at ``stage``: ``"nki"`` (frontend output) or ``"nisa"`` (final: a
        placed compile is scheduled first, :meth:`final`)."""
        if stage not in art.FILES:
            raise ValueError(f"unknown IR stage {stage!r}; choose from {', '.join(art.FILES)}")
        return (self if stage == "nki" else self.final()).own_ir(stage)

    def own_ir(self, stage: str = "nisa") -> str:
        """The IR text at ``stage`` of this compile itself (for a placed compile, ``"nisa"``
        is its module before ``nisa-schedule``; a placed compile's texts are printed when
        first asked for: its artifact holds the compact forms,
        :func:`nki_mlir.runtime.artifact.required`)."""
        ir = self._files()
        if stage not in ir:
            if stage == "nisa":
                ir["nisa"] = print_module(self._nisa_module())
            else:
                from ..runtime.ir_compact import decode as from_compact
                ir[stage] = print_module(from_compact(ir["nki_compact"]))
        return ir[stage]

    def save(self, dest: str | os.PathLike) -> Path:
        """Write this kernel's artifact files (``manifest.json``, ``kernel.nisa.mlir``,
        ``kernel.nki.mlir``) into the directory ``dest`` (created if needed); returns it.
        A placed compile saves its scheduled kernel (:meth:`final`)."""
        ck = self.final()
        art.save_files(Path(dest), ck.manifest, {s: ck.own_ir(s) for s in art.FILES})
        return Path(dest)

    @property
    def program(self):
        """The decoded interpreter program (decoded once per process; like a compile, with
        the cyclic garbage collector paused: see :func:`nki_mlir.runtime.gc_pause.no_cyclic_gc`).
        It keeps none of the compile's IR (:mod:`nki_mlir.runtime.ir_release`)."""
        return self.decoded()

    def decoded(self, hazards: bool = False):
        """:attr:`program`; decoded for a hazard-checked run (``hazards``), it keeps its ops
        until the checks have read them (:func:`nki_mlir.runtime.ir_release.drop_ops`)."""
        if self._program is None:
            from ..runtime import precise_fp
            from ..runtime.ir_release import release
            prog = _decode(self._nisa_module(), self.spec.name)
            self._module = None
            # (what needs an op once they are dropped decodes the artifact again; a run with
            # NKI_PRECISE_FP=0 checks the float32-storage program instead, Program.wide)
            release(prog, functools.partial(_decode_files, self._files(), self.stage,
                                            self.spec.name),
                    keep_ops=hazards and precise_fp.precise())
            self._program = prog
            cache.memory_trim()     # (its weight grew: the in-memory cache's bound)
        return self._program

    def weight(self) -> int:
        """The instructions of this kernel's decoded program (0 until it is decoded): what
        it keeps alive while the in-memory cache holds it (:mod:`nki_mlir.runtime.cache`
        bounds their sum)."""
        p = self._program
        return 0 if p is None else p.instruction_count

    def _nisa_module(self) -> ModuleOp:
        """The nisa module: the compile's own (still in memory), else rebuilt from the
        artifact's compact form (:mod:`nki_mlir.runtime.ir_compact`; a final artifact's is
        checked against its text), else parsed from its text."""
        if self._module is not None:
            return self._module
        return _module_of(self._files(), self.stage)

    def _files(self) -> dict[str, str]:
        """The artifact's files (stage -> text), read from disk when not in memory."""
        if not self._ir and self.artifact is not None:
            _, self._ir = art.read_artifact(self.artifact)
        return self._ir

    def __call__(self, *args: Any, **kwargs: Any):
        """Run on the ISA interpreter; returns one array or a tuple (as the kernel returns).
        Called with torch or JAX tensors, it returns tensors of that library
        (:mod:`nki_mlir.interop`)."""
        from ..interop import prepare_args
        args, kwargs, kind, write_back = prepare_args(args, kwargs)
        return self._call_arrays(args, kwargs, kind, write_back)

    def _call_arrays(self, args: tuple, kwargs: dict, kind: str | None, write_back=None):
        """:meth:`__call__` on arguments already converted to NumPy; ``write_back()`` (from
        :func:`nki_mlir.interop.prepare_args`) runs after the run, and outputs go back to the
        framework ``kind`` (None: NumPy)."""
        outs = self._run_arrays(args, kwargs)
        if write_back is not None:
            write_back()
        if kind is not None:
            from ..interop import from_numpy
            outs = tuple(from_numpy(o, kind) for o in outs)
        if self.spec.returns_tuple:
            return tuple(outs)
        return outs[0] if outs else None

    def estimate(self, *args: Any, keep_slices: bool = True, throttle: bool = False):
        """The cost model's :class:`~nki_mlir.perf.estimate.Estimate` of one run on one
        NeuronCore of this kernel's target: latency (ns), per-engine busy time, MFU/MBU,
        roofline bound and ratio, critical path, warnings and the timeline slices.

        ``args`` (the tensor arguments) matter only for kernels whose control flow reads
        machine state; see :func:`nki_mlir.perf.estimate`.
        """
        from ..perf import estimate
        return estimate(self.final(), args or None, keep_slices=keep_slices, throttle=throttle)

    def run(self, args: tuple, kwargs: dict, launch: Any = None, mode: str | None = None,
            hazards: bool | None = None, program_ids: tuple | None = None) -> tuple:
        """Run on the ISA interpreter; returns every output as a tuple.

        ``launch``: the :class:`~nki_mlir.runtime.spmd.Instance` when this is one program
        instance of an SPMD / LNC launch (its ``shared_hbm`` outputs are the launch's).
        ``program_ids``: without ``launch``, the ids of the instance to run when this program
        serves every instance of its launch (``manifest["spmd"]["symbolic_ids"]``).
        ``mode`` / ``hazards``: see :meth:`nki_mlir.runtime.program.Program.run` (engine
        queues and hazard checks; defaults from ``NKI_MLIR_HAZARDS``, which ``__call__`` uses;
        a placed compile runs queue mode on its :meth:`final` kernel).
        """
        from ..interop import prepare_args
        args, kwargs, _, write_back = prepare_args(args, kwargs)
        outs = self._run_arrays(args, kwargs, launch, mode, hazards, program_ids)
        write_back()
        return outs

    def _run_arrays(self, args: tuple, kwargs: dict, launch: Any = None, mode: str | None = None,
                    hazards: bool | None = None, program_ids: tuple | None = None) -> tuple:
        """:meth:`run` on arguments already converted to NumPy (the warm-call path)."""
        bound = dict(zip((a.name for a in self.spec.args), args))
        for k, v in kwargs.items():
            if k in bound:
                raise NKITypeError(f"{self.spec.name}(): got multiple values for argument '{k}'")
            bound[k] = v
        arrays = []
        for a in self.spec.args:
            if a.kind != "tensor":
                continue
            if a.name not in bound:
                raise NKITypeError(f"{self.spec.name}(): missing tensor argument '{a.name}'")
            arrays.append(bound[a.name])
        from ..runtime.program import resolve_mode
        ck = self
        mode, hazards = resolve_mode(mode, hazards)
        if self.stage != "final" and mode != "program-order":   # engine queues: the schedule's
            ck = self.final()
        return ck.decoded(hazards).run(arrays, launch=launch, mode=mode, hazards=hazards,
                                       program_ids=program_ids)


# ------------------------------------------------------------------------------ entry


def _module_of(ir: dict[str, str], stage: str) -> ModuleOp:
    """The nisa module of an artifact's files ``ir`` (:meth:`CompiledKernel._nisa_module`)."""
    if ir.get("compact"):
        from ..runtime.ir_compact import decode as from_compact
        # (a placed compile's form is made without its text: printed from it later)
        return from_compact(ir["compact"], ir.get("nisa") if stage == "final" else None)
    return parse_module(ir["nisa"])


def _decode(module: ModuleOp, name: str, wide: bool = False):
    """The decoded program of ``module`` (with the cyclic garbage collector paused: see
    :func:`nki_mlir.runtime.gc_pause.no_cyclic_gc`); ``wide``: its ``NKI_PRECISE_FP=0``
    program (:mod:`nki_mlir.runtime.precise_fp`)."""
    from ..runtime.interpreter import decode
    with no_cyclic_gc():
        return on_fresh_stack(decode, module, name, wide)


def _decode_files(ir: dict[str, str], stage: str, name: str, wide: bool = False):
    """The program of an artifact's files decoded again (:mod:`nki_mlir.runtime.ir_release`;
    ``wide``: its ``NKI_PRECISE_FP=0`` program)."""
    return _decode(_module_of(ir, stage), name, wide)


def _plain(v: Any) -> bool:
    """A value whose repr is its content (numbers, strings, dtypes, tuples of them)."""
    if isinstance(v, tuple):
        return all(_plain(x) for x in v)
    return isinstance(v, (int, float, bool, str, type(None), np.dtype, np.generic)) or hasattr(v, "enum")


def _key_parts(fn, specs: tuple[ArgSpec, ...], target: str, options: dict) -> dict[str, Any]:
    import xdsl
    src = FunctionSource.of(fn)
    return {
        "source": file_hash(src.file) if src else "", "qualname": getattr(fn, "__qualname__", ""),
        "referenced_values": referenced_values_digest(fn),
        "module": getattr(fn, "__module__", ""),
        "compiler": __version__, "xdsl": str(getattr(xdsl, "__version__", "0.74.0")),
        "args": [(s.name, s.kind, s.shape, s.dtype,
                  repr(s.value) if _plain(s.value) else value_digest(s.value)) for s in specs],
        "target": target, "options": options,
    }


def compile_kernel(fn, args: tuple, kwargs: dict, target: str | None = None,
                   schedule: str = "list", use_cache: bool = True, spmd: Any = None,
                   output_check: str | None = None, spill: bool = True,
                   stage: str = "final", **ignored: Any) -> CompiledKernel:
    """Compile ``fn`` for ``args``/``kwargs`` (cached in memory and on disk).

    ``spmd``: the :class:`~nki_mlir.frontend.spmd.SpmdInfo` of one program instance of an
    SPMD / LNC launch (part of the cache key; recorded in the manifest under ``"spmd"``).
    ``output_check``: ``"warn"`` / ``"error"`` / ``"off"`` for outputs written only in part
    (default ``$NKI_MLIR_OUTPUT_CHECK`` or warn; :mod:`nki_mlir.passes.output_coverage`).
    ``spill``: when the SBUF tensors live at once do not fit, keep some in HBM between their
    uses (default True; False: the overflow is an error, :mod:`nki_mlir.passes.spill`).
    ``stage``: ``"final"`` (the whole pipeline) or ``"placed"`` (stop before
    ``nisa-schedule``, for a program-order run; the module docstring).  ``NKI_MLIR_DUMP_IR``
    makes every compile final (it dumps every stage).

    Raises:
        NKIError: any error in the kernel, located at its source line.
    """
    tgt = resolve_target(target)
    if stage not in STAGES:
        raise NKIError(f"stage={stage!r}: expected one of {', '.join(map(repr, STAGES))}",
                       caller_loc(), category="bad option")
    if os.environ.get("NKI_MLIR_DUMP_IR"):
        stage = "final"
    skey = None
    if use_cache:       # a repeated call: the guard of its argument specs (nki_mlir.driver.warm)
        try:
            skey = warm.spec_key(fn, args, kwargs,
                                 warm.options_key(tgt, schedule, spmd, output_check, spill, stage))
        except TypeError:
            skey = None
        if skey is not None and (hit := warm.lookup(skey)) is not None:
            return hit
    _check_schedule(schedule)
    if not isinstance(spill, bool):
        raise NKIError(f"spill={spill!r}: expected True or False", caller_loc(), category="bad option")
    specs = arg_specs(fn, args, kwargs)
    opts: dict[str, Any] = {"schedule": schedule}
    if not spill:       # (the default stays out of the key: keys of earlier compiles hold)
        opts["spill"] = False
    if spmd is not None:
        opts["spmd"] = list(spmd.key())
    try:
        check = output_coverage.resolve_mode(output_check)
    except NKIError as exc:
        raise exc.relocate(caller_loc()) from None
    if check != "warn":
        opts["output_check"] = check
    parts = _key_parts(fn, specs, tgt, opts)
    placed = stage == "placed"
    try:
        final_key = cache.cache_key(parts)
        key = cache.cache_key({**parts, "options": {**opts, "stage": stage}}) if placed else final_key
        # the program instances of one launch differ only in their ids: they share loop hints
        # (the digest of the values the kernel reads is left out: a helper's module state
        # may change between two instances; a hint only unrolls loops, never changes meaning)
        siblings = None if spmd is None else cache.cache_key(
            {**parts, "referenced_values": "", "options": {**opts, "spmd": list(spmd.launch_key())}})
    except cache.UnstableKey:
        key, use_cache = os.urandom(32).hex(), False   # no content key: compile uncached
        final_key, siblings = os.urandom(32).hex(), None
    if use_cache and (hit := cache.memory_get(key)) is not None:
        warm.remember(skey, fn, key)
        return hit
    dest = cache.cache_dir() / _entry_name(fn, key)
    if use_cache and os.path.lexists(dest):
        ck = _disk_hit(dest, tgt)
        if ck is not None:
            cache.memory_put(key, ck)
            warm.remember(skey, fn, key)
            return ck
    if use_cache and not placed:    # a kernel call placed it in this process: schedule that
        hit = cache.memory_get(cache.cache_key({**parts, "options": {**opts, "stage": "placed"}}))
        if hit is not None:
            ck = hit.final()
            warm.remember(skey, fn, key)
            return ck
    t0 = time.perf_counter()
    with no_cyclic_gc():
        module, spec = on_fresh_stack(build_module, fn, specs, tgt, spmd=spmd, unroll_key=siblings)
        if spmd is None:      # one instance of a launch grid writes part of its outputs
            output_coverage.check_outputs(module, check)
        from ..runtime.ir_compact import encode as to_compact
        # a placed artifact holds its modules in compact form alone (their texts, seconds
        # each for a large kernel, are printed when asked for: CompiledKernel.own_ir)
        ir_nki = None if placed else print_module(module)
        nki_compact = to_compact(module, None) if placed else None
        dump = ir_dumper(fn.__name__, key)
        if dump is not None:        # (NKI_MLIR_DUMP_IR: a final compile)
            dump(0, "frontend.nki", ir_nki)
        only = PLACED if placed else None
        big = progress.enabled() and sum(1 for _ in module.walk()) >= PROGRESS_MIN_OPS
        steps = len(PLACED) + 1 if placed else PROGRESS_STEPS
        with progress.bar(steps, f"compiling {fn.__name__}", "stage") if big else progress.SILENT as bar:
            pipeline = on_fresh_stack(run_pipeline, module, tgt, schedule, dump, bar if big else None,
                                      spill, only)
            if placed:      # nisa-schedule's check of the kernel (its schedule waits: final())
                on_fresh_stack(check_module, module)
            compact = to_compact(module, None) if placed else None
            ir_nisa = print_module(module) if compact is None else None
            if not placed:
                compact = to_compact(module, ir_nisa)
            bar.update()
    seconds = time.perf_counter() - t0
    from ..passes.memory_report import manifest_entry
    mem = manifest_entry(module)    # every nkim.* module attribute as JSON (memory report)
    manifest = {
        "compiler_version": __version__, "compiler_digest": cache.compiler_digest(),
        "target": tgt, "kernel": spec.name,
        "args": [_arg_json(a) for a in spec.args], "outputs": [o.__dict__ for o in spec.outputs],
        "returns_tuple": spec.returns_tuple, "pipeline": pipeline, "memory": mem,
        "source_hash": parts["source"], "cache_key": key,
        "compile_seconds": round(seconds, 6),
        "spmd": spmd.manifest() if spmd is not None else None,
        "cross_core_ops": cross_core_ops(module),
    }
    if placed:      # what final() needs to finish it (nki_mlir.driver.schedule_stage)
        manifest["stage"] = "placed"
        manifest["final"] = {"cache_key": final_key, "dir": _entry_name(fn, final_key),
                             "schedule": schedule, "cached": use_cache}
    ir = {s: t for s, t in (("nisa", ir_nisa), ("nki", ir_nki), ("compact", compact),
                            ("nki_compact", nki_compact)) if t is not None}
    path = None
    if use_cache:      # an uncached compile keeps its artifact in memory: no files left behind
        path = art.write_artifact(dest, manifest, ir)
        cache.added(path)
    ck = CompiledKernel(spec, path, tgt, manifest, seconds, None, ir, _module=module)
    if use_cache:
        cache.memory_put(key, ck)
        warm.remember(skey, fn, key)
    return ck


def _entry_name(fn, key: str) -> str:
    """The cache directory name of ``fn``'s compile with cache key ``key``."""
    return f"{fn.__name__}-{key[:16]}"


def _check_schedule(schedule: Any) -> None:
    from ..passes.schedule import ALIASES, MODES
    if not isinstance(schedule, str) or ALIASES.get(schedule, schedule) not in MODES:
        raise NKIError(f"schedule={schedule!r}: expected one of {', '.join(map(repr, MODES))}",
                       caller_loc(), category="bad option")


def _disk_hit(dest: Path, target: str) -> CompiledKernel | None:
    """The cache entry at ``dest``, checked and decoded; ``None`` (after a warning naming the
    entry, which is removed) when it is damaged in any way, so the caller rebuilds it.  An
    entry written by other compiler sources (its manifest's ``compiler_digest``, see
    :func:`~nki_mlir.runtime.cache.compiler_digest`: an edited checkout, an upgrade without a
    version bump) is stale: ``None`` without a warning, and the rebuild replaces it."""
    from xdsl.utils.exceptions import ParseError
    try:
        manifest, ir = art.read_artifact(dest, compiler_version=__version__)
        if manifest.get("compiler_digest") != cache.compiler_digest():
            cache.remove(dest)
            return None
        if not isinstance(manifest["cross_core_ops"], list):
            raise ArtifactError("malformed manifest (cross_core_ops is not a list)")
        ck = CompiledKernel(_spec_from_manifest(manifest), dest, target, manifest, 0.0, "disk", ir)
        ck.program        # parse and decode now: an entry that does not decode is damaged
    except (ArtifactError, ParseError, VerifyException, NKIError, KeyError, TypeError, ValueError,
            AttributeError) as exc:
        warnings.warn(f"nki-mlir: ignoring a damaged cache entry and rebuilding it: {dest.name}: {exc}")
        cache.remove(dest)
        return None
    cache.touch(dest)
    return ck


def _arg_json(a: ArgSpec) -> dict[str, Any]:
    return {"name": a.name, "kind": a.kind, "shape": list(a.shape), "dtype": a.dtype,
            "value": None if a.kind == "tensor" else repr(a.value)}


def _spec_from_manifest(m: dict[str, Any]) -> KernelSpec:
    args = tuple(ArgSpec(a["name"], a["kind"], tuple(a["shape"]), a["dtype"], a["value"]) for a in m["args"])
    outs = tuple(OutputSpec(o["name"], tuple(o["shape"]), o["dtype"]) for o in m["outputs"])
    for a in args:
        if a.kind == "tensor" and a.dtype not in dtypes.BY_NAME:
            raise ArtifactError(f"unknown dtype {a.dtype!r} in manifest")
    return KernelSpec(m["kernel"], args, outs, bool(m["returns_tuple"]))


__all__ = ["compile_kernel", "CompiledKernel"]
