"""``@nki.jit``: the kernel object users decorate their functions with, and its launches.

Calling a :class:`Kernel` on NumPy arrays compiles it (cached on the argument shapes,
dtypes and compile-time values) and runs it on the ISA interpreter, returning NumPy
arrays -- NKI's baremetal/simulation behaviour (NKI language guide (nki/get-started/nki-language-guide)).

``kernel[grid]`` is a :class:`LaunchedKernel` (NKI language guide (nki/get-started/nki-language-guide)):

- **Beta 1** kernels (their module imported ``neuronxcc.nki``): ``kernel[g0, g1, ...]`` is an
  SPMD grid; entries are positive ints, ``nl.nc(n)`` or ``nl.spmd_dim(...)`` markers (at most
  one dimension spread over physical cores, at most 2 cores, and 2 only on trn2/trn3).
- **Beta 2+** kernels: ``kernel[n]`` is the LNC degree, 1 or 2 (2 only on trn2/trn3);
  ``kernel[2]`` runs two instances with ``nl.program_id(0)`` 0 and 1 on the two cores of the
  logical core.  ``kernel[1]`` is LNC1 with a one-dimensional grid.

The compiler traces the kernel once for all program instances when its Python uses
``nl.program_id`` only in index arithmetic (offsets, slices, ``sendrecv`` ranks, instruction
names): the id is then read by each instance when it runs (:mod:`nki_mlir.frontend.spmd`).
A kernel that needs the id as a Python value (``if pid == 0:``) is specialised once per
instance, the id a compile-time int (the compile cache key then includes the ids);
``NKI_MLIR_SHARED_LAUNCH=0`` always does that.  When the kernel never reads
``nl.program_id``, all instances are identical and one compile serves them all.  How the
instances run and what they share (``shared_hbm``) is :mod:`nki_mlir.runtime.spmd`.
"""
from __future__ import annotations

import functools
import itertools
import math
import os
from typing import Any

import numpy as np

from ..diagnostics import caller_loc
from ..errors import NKIError
from ..runtime.gc_pause import no_cyclic_gc
from . import warm_plan
from .results import attach_mode, call_in_mode

#: ``nki.jit(mode=...)`` values of NKI Beta 1 (NKI language guide (nki/get-started/nki-language-guide))
#: ``trace`` is NKI 0.1's sub-kernel decorator (``nki.jit(mode='trace')``): such a kernel
#: called from inside a kernel runs inline, as a helper function does
MODES = ("auto", "jax", "torchxla", "baremetal", "benchmark", "simulation", "trace")


def _launch_error(message: str, code: str | None = None) -> NKIError:
    return NKIError(message, caller_loc(), category="bad launch", code=code)


class Kernel:
    """A ``@nki.jit`` kernel.  ``kernel(*arrays)`` compiles (cached) and runs it.

    Attributes:
        fn: the decorated Python function.
        options: decorator options (``target``, ``mode``, ...).
    """

    def __init__(self, fn, **options: Any):
        self.fn = fn
        self.options = dict(options)
        mode = self.options.get("mode")
        if mode is not None and mode not in MODES:
            raise NKIError(f"nki.jit(mode={mode!r}): mode must be one of {', '.join(map(repr, MODES))}",
                           category="bad option")
        functools.update_wrapper(self, fn)
        if mode is not None:
            attach_mode(self, mode)

    def compile(self, *args: Any, **kwargs: Any):
        """Compile for these arguments; returns a :class:`~nki_mlir.compiler.CompiledKernel`."""
        return self.compile_with(args, kwargs)

    def compile_with(self, args: tuple, kwargs: dict, **options: Any):
        """Compile with driver options (``target``, ``use_cache``, ``spmd``) on top of the decorator's."""
        from ..interop import convert_args
        args, kwargs, _ = convert_args(args, kwargs)
        return self._compile_arrays(args, kwargs, options)

    def _compile_arrays(self, args: tuple, kwargs: dict, options: dict):
        """:meth:`compile_with` on arguments already converted to NumPy."""
        from .compile import compile_kernel
        try:
            return compile_kernel(self.fn, args, kwargs, **{**self.options, **options})
        except NKIError as exc:
            raise exc.with_traceback(None) from None  # the user's error, not our frames

    def __call__(self, *args: Any, **kwargs: Any):
        spec = warm_plan.call_spec(self, args, kwargs)
        if spec is not None:      # a warm call: its launch plan (nki_mlir.driver.warm_plan)
            try:
                out = warm_plan.call(spec, self, args, kwargs)
            except NKIError as exc:
                raise exc.with_traceback(None) from None
            if out is not warm_plan.MISS:
                return out
        if _tracing():
            # called from inside a kernel being traced (nki-library's kernels call each other):
            # the sub-kernel runs inline, like a plain helper function
            from ..frontend.loop_rewrite import traced_function
            return traced_function(self.fn)(*args, **kwargs)
        from .jax_call import has_jax_tracer, jax_call
        if has_jax_tracer(args, kwargs):  # inside jax.jit: a jax.pure_callback
            return jax_call(self, args, kwargs)
        mode = self.options.get("mode")
        if mode is not None:
            return call_in_mode(self, mode, args, kwargs)
        out, compiled = self.run(args, kwargs)
        warm_plan.make(spec, self, args, kwargs, compiled[0])
        return out

    def run(self, args: tuple, kwargs: dict) -> tuple[Any, list]:
        """Compile and run once; returns ``(result, [compiled kernel])`` (result as the kernel returns)."""
        from ..interop import prepare_args
        args, kwargs, kind, write_back = prepare_args(args, kwargs)
        from .schedule_stage import run_stage
        with no_cyclic_gc():    # compile, decode and run: one pause (nki_mlir.runtime.gc_pause)
            compiled = self._compile_arrays(args, kwargs, {"stage": run_stage()})
            try:
                return compiled._call_arrays(args, kwargs, kind, write_back), [compiled]
            except NKIError as exc:
                raise exc.with_traceback(None) from None

    def __getitem__(self, grid) -> Kernel | LaunchedKernel:
        g = grid if isinstance(grid, tuple) else (grid,)
        if g == ():
            return self
        return LaunchedKernel(self, g)

    def __repr__(self) -> str:
        return f"<nki.jit kernel {self.fn.__name__}>"


class LaunchedKernel:
    """``kernel[grid]``: an SPMD grid (Beta 1) or an LNC launch (Beta 2+), callable on arrays.

    Attributes:
        kernel: the :class:`Kernel`.
        grid: the bracket entries as written (ints, ``nl.nc`` / ``nl.spmd_dim`` markers).

    Calling it compiles one specialisation per program instance and runs them all (see the
    module docstring); it returns the launch's outputs, which every instance wrote into.

    Raises:
        NKIError: a grid that is not valid for the kernel and target (located at the launch);
            a kernel error (located at the kernel line).
    """

    def __init__(self, kernel: Kernel, grid: tuple):
        self.kernel = kernel
        self.grid = grid
        functools.update_wrapper(self, kernel.fn)

    def __getitem__(self, grid):
        raise _launch_error(f"{self!r} is already launched with a grid; index the kernel once, "
                            f"e.g. kernel[2, 2](...)")

    def __repr__(self) -> str:
        return f"<nki.jit kernel {self.kernel.fn.__name__}[{', '.join(map(repr, self.grid))}]>"

    # ----------------------------------------------------------------------- plan
    def plan(self, target: str | None = None) -> tuple[tuple, int, bool]:
        """``(dims, cores, lnc)``: the grid dimensions (:class:`~.frontend.spmd.SpmdDim`), the
        physical cores of the launch and whether it is a Beta 2 LNC launch."""
        from ..frontend.source import uses_beta1
        from ..frontend.spmd import MAX_CORES, SpmdDim
        from ..targets import LNC_CORES, resolve_target

        tgt = resolve_target(target or self.kernel.options.get("target"))
        text = f"{self.kernel.fn.__name__}[{', '.join(map(repr, self.grid))}]"
        beta1 = uses_beta1(self.kernel.fn)
        dims = []
        for g in self.grid:
            if isinstance(g, SpmdDim):
                dims.append(g)
            elif isinstance(g, (int, np.integer)) and not isinstance(g, (bool, np.bool_)) and int(g) >= 1:
                dims.append(SpmdDim(int(g)))
            else:
                raise _launch_error(f"{text}: launch-grid entries must be positive ints"
                                    f"{' or nl.nc(n) / nl.spmd_dim(...) markers' if beta1 else ''}, "
                                    f"got {g!r}")
        lnc = False
        if not beta1:
            if len(dims) != 1 or dims[0].cores > 1 or dims[0].size > MAX_CORES:
                raise _launch_error(
                    f"{text}: the launch bracket of an NKI 0.2+ kernel is the LNC degree, 1 or 2 "
                    f"(kernel[2] runs on the 2 NeuronCores of a trn2/trn3 logical core); "
                    f"multi-dimensional SPMD grids and nl.nc / nl.spmd_dim are NKI Beta 1 "
                    f"(import neuronxcc.nki)")
            lnc = True
            n = dims[0].size
            dims = [SpmdDim(n, n, 1, str(n))]
        spread = [d for d in dims if d.cores > 1]
        if len(spread) > 1:
            raise _launch_error(f"{text}: at most one launch-grid dimension can be spread over "
                                f"physical cores (nl.nc)")
        cores = spread[0].cores if spread else 1
        if cores > MAX_CORES:
            raise _launch_error(f"{text}: {cores} physical NeuronCores requested; a logical "
                                f"NeuronCore has at most {MAX_CORES} (LNC2 on trn2/trn3)")
        if cores > LNC_CORES[tgt]:
            raise _launch_error(f"{text}: LNC2 (2 physical NeuronCores) needs trn2 or trn3; trn1 "
                                f"has no multi-core logical NeuronCores (set target=\"trn2\" or "
                                f"NEURON_PLATFORM_TARGET_OVERRIDE=trn2)")
        return tuple(dims), cores, lnc

    def instance_cores(self, target: str | None = None) -> list[int]:
        """The physical core of each program instance, in program-id order."""
        dims = self.plan(target)[0]
        return [sum(d.core_of(i) for d, i in zip(dims, ids))
                for ids in itertools.product(*(range(d.size) for d in dims))]

    # ------------------------------------------------------------------------ run
    def __call__(self, *args: Any, **kwargs: Any):
        _not_while_tracing(self)
        mode = self.kernel.options.get("mode")
        if mode is not None:
            return call_in_mode(self, mode, args, kwargs)
        return self.run(args, kwargs)[0]

    def compile(self, *args: Any, **kwargs: Any) -> list:
        """Compile every program instance for these arguments (no run).

        Returns the :class:`~nki_mlir.compiler.CompiledKernel` of each instance in program-id
        order (row-major over the grid); the same object repeats when the kernel never reads
        ``nl.program_id``.  ``compiled.manifest["spmd"]`` holds the instance's grid and ids.
        """
        return self.compile_with(args, kwargs)[0]

    def compile_with(self, args: tuple, kwargs: dict, **options: Any) -> tuple[list, list, list, int]:
        """``(compiled per instance, program ids per instance, core per instance, cores of the
        launch)`` with driver options (``target``, ``use_cache``) on top of the decorator's."""
        from ..frontend.spmd import SpmdInfo

        dims, cores, lnc = self.plan(options.get("target"))
        grid = tuple(d.size for d in dims)
        ids_all = list(itertools.product(*(range(n) for n in grid)))
        core_of = self.instance_cores(options.get("target"))

        def compile_one(n, symbolic=False):
            info = SpmdInfo(grid, tuple(ids_all[n]), cores, core_of[n], lnc, symbolic=symbolic)
            return self.kernel.compile_with(args, kwargs, spmd=info, **options)

        # traced once for all instances unless the kernel needs its id as a Python value
        first = compile_one(0, symbolic=len(ids_all) > 1 and shared_launch())
        same = not (first.manifest.get("spmd") or {}).get("uses_program_id", True)
        compiled = [first] + [first if same else compile_one(n) for n in range(1, len(ids_all))]
        return compiled, ids_all, core_of, cores

    def run(self, args: tuple, kwargs: dict) -> tuple[Any, list]:
        """Compile and run every instance; returns ``(result, compiled kernels per instance)``."""
        from ..interop import prepare_args

        # once for the launch: every instance sees the same (contiguous) arrays
        args, kwargs, kind, write_back = prepare_args(args, kwargs)
        with no_cyclic_gc():    # every instance's compile, decode and run: one pause
            return self._run_launch(args, kwargs, kind, write_back)

    def _run_launch(self, args: tuple, kwargs: dict, kind, write_back) -> tuple[Any, list]:
        """:meth:`run` on arguments already converted to NumPy."""
        from ..interop import from_numpy
        from ..runtime.spmd import run_instances
        from .schedule_stage import run_stage

        compiled, ids_all, core_of, cores = self.compile_with(args, kwargs, stage=run_stage())
        first = compiled[0]
        for ck in compiled[1:]:
            if (ck.spec.outputs, ck.spec.returns_tuple) != (first.spec.outputs, first.spec.returns_tuple):
                raise NKIError(f"{self!r}: program instances return different outputs "
                               f"({_outs(first)} vs {_outs(ck)}); every instance must return the "
                               f"same shared_hbm tensors", caller_loc(), category="bad launch")
        distinct = list({id(c): c for c in compiled}.values())
        concurrent = cores > 1 and any(ck.manifest["cross_core_ops"] for ck in distinct)
        from ..runtime.program import resolve_mode
        hazards = resolve_mode(None, None)[1]
        try:
            for ck in distinct:
                ck.decoded(hazards)  # decode here, not concurrently in the core threads
        except NKIError as exc:
            raise exc.with_traceback(None) from None
        work = [(core, tuple(ids), functools.partial(_run_instance, ck, args, kwargs))
                for ids, core, ck in zip(ids_all, core_of, compiled)]
        try:
            results = run_instances(work, cores, concurrent)
        except NKIError as exc:
            raise exc.with_traceback(None) from None
        write_back()
        outs = [from_numpy(o, kind) for o in results[0]]
        if first.spec.returns_tuple:
            return tuple(outs), compiled
        return (outs[0] if outs else None), compiled

    @property
    def instances(self) -> int:
        """Number of program instances of the launch."""
        return math.prod(d.size for d in self.plan()[0])


def shared_launch() -> bool:
    """``NKI_MLIR_SHARED_LAUNCH`` (``1``, the default, or ``0``): trace the instances of a
    launch once, with symbolic program ids, when the kernel allows it (``0``: one trace per
    instance, each with its ids as Python ints; the outputs are the same).

    Raises:
        NKIError: another value.
    """
    v = os.environ.get("NKI_MLIR_SHARED_LAUNCH", "1") or "1"
    if v not in ("0", "1"):
        raise NKIError(f"NKI_MLIR_SHARED_LAUNCH={v!r}: expected 1 (trace the instances of a "
                       f"launch once where the kernel allows it) or 0 (once per instance)",
                       category="bad option")
    return v == "1"


def _outs(ck) -> str:
    return ", ".join(f"{list(o.shape)} {o.dtype}" for o in ck.spec.outputs) or "none"


def _run_instance(ck, args, kwargs, instance):
    return ck.run(args, kwargs, launch=instance)


def jit(fn=None, **options: Any):
    """Decorate a kernel: ``@nki.jit`` or ``@nki.jit(target="trn1")``.

    Options: ``target`` ("trn1" | "trn2" | "trn3"; default: ``NEURON_PLATFORM_TARGET_OVERRIDE``
    or trn2).  ``mode`` (NKI Beta 1: "auto" | "jax" | "torchxla" | "baremetal" | "benchmark" |
    "simulation"): every mode runs on the ISA interpreter; the ones that would need a Neuron
    device or framework say so once per process, and "benchmark" attaches a
    ``benchmark_result`` as :func:`nki_mlir.entry.benchmark` does (see :mod:`nki_mlir.driver.entry`).
    ``platform_target`` from older NKI releases is accepted and ignored (NKI ``nki.jit`` API page).
    ``output_check`` ("warn" | "error" | "off"; default ``NKI_MLIR_OUTPUT_CHECK`` or "warn"): what
    to do about an output the kernel writes only in part (:mod:`nki_mlir.passes.output_coverage`).

    Raises:
        NKIError: an unknown ``mode``.
    """
    if fn is None:
        return lambda f: jit(f, **options)
    if isinstance(fn, Kernel):
        return fn if not options else Kernel(fn.fn, **{**fn.options, **options})
    return Kernel(fn, **options)


def simulate(kernel):
    """``nki.simulate(kernel)(*arrays)``: run a kernel on the ISA interpreter (NKI 0.3+ spelling).

    ``kernel`` may be a ``@nki.jit`` kernel, a launch ``kernel[2]`` or a plain function.
    """
    if isinstance(kernel, (Kernel, LaunchedKernel)):
        return kernel
    return Kernel(kernel)


def _tracing() -> bool:
    from ..frontend import tracer
    return tracer.active() is not None


def _not_while_tracing(kernel: Any) -> None:
    """A launched kernel called from inside a kernel being traced: a located error (an
    unlaunched ``@nki.jit`` kernel called there runs inline, see :meth:`Kernel.__call__`)."""
    from ..frontend import tracer
    if tracer.active() is None or not isinstance(kernel, LaunchedKernel):
        return
    from ..errors import NKITypeError
    from ..frontend.frames import user_loc
    raise NKITypeError(f"{kernel!r}: a kernel launched on an SPMD grid / LNC cannot be called "
                       f"from inside another kernel; call it without brackets (a sub-kernel "
                       f"runs inline)", user_loc(), code="err_nested_kernel_with_spmd_grid")
