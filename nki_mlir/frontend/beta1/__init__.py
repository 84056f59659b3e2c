"""The NKI Beta 1 front: what a kernel written against ``neuronxcc.nki`` adds to the tracer.

A Beta 1 kernel is traced like any other (:mod:`..trace_build`); the tracer calls in here
for what only Beta 1 has (``IRBuilder.beta1`` is set for such kernels):

- :mod:`.trace`: index grids (``nl.arange`` / ``nl.mgrid``) and their Python operators,
  pending views ``x[grid keys]``, ``psum[...] += matmul``, local ``nt`` annotations;
- :mod:`.index_expr`, :mod:`.index`: index expressions and subscripts by them;
- :mod:`.masks` (+ :mod:`.mask_regions`, :mod:`.mask_views`, :mod:`.mask_guards`):
  ``mask=`` on any call, compiled per masked shape;
- :mod:`.tile_ops`: Python operators on tiles (``a + b``, ``a < b``, ``-a``);
- :mod:`.block_dims`: block dimensions (``nl.ndarray((B, nl.par_dim(P), F))``);
- :mod:`.isa`, :mod:`.lang`: the Beta 1-only ``nisa`` / ``nl`` / ``ncc`` handlers and
  spellings (``nl.loop_reduce``, ``nl.static_cast``, ``nl.atomic_rmw``, ...).

Semantics: the Beta 1 ``nki.language`` / ``nki.isa`` API pages (Neuron SDK 2.26) and the NKI
migration guide (nki/migration).
"""
from . import block_dims, index, isa, lang, tile_ops  # noqa: F401  (register the Beta 1 handlers and subscript forms)
