"""The driver: what runs a kernel through the compiler and the interpreter.

- :mod:`.jit`: ``@nki.jit`` kernel objects (:class:`~.jit.Kernel`) and their launches
  (:class:`~.jit.LaunchedKernel`);
- :mod:`.compile`: :func:`~.compile.compile_kernel` (frontend, pass pipeline, artifact in the
  compile cache) and the :class:`~.compile.CompiledKernel` it returns;
- :mod:`.pipeline`: the pass pipeline run on the frontend's module (the pass list comes from
  the registry, :data:`nki_mlir.passes.DEFAULT_PIPELINE`) and the IR text in and out;
- :mod:`.warm`: the warm-call guard (a repeated call finds its compiled kernel without
  rebuilding the cache key); :mod:`.warm_plan`: the launch plan a repeated call on NumPy
  arrays runs without the rest of the driver;
- :mod:`.entry` / :mod:`.results`: the legacy (NKI Beta 1) entry points ``nki.baremetal``,
  ``nki.benchmark``, ``nki.profile``, ``nki.simulate_kernel`` and what they report.

The old module paths :mod:`nki_mlir.compiler`, :mod:`nki_mlir.kernel` and
:mod:`nki_mlir.entry` re-export these names.  Layers: docs/architecture.md.
"""
