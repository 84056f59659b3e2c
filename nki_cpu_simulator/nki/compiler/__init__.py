"""``nki_cpu_simulator.nki.compiler``: stand-in for ``nki.compiler`` (the Neuron compiler driver).

The nki-library test suite imports ``nki.compiler.frontend`` (``NKIFrontend``,
``ParserFrontend``) and ``nki.compiler.ncc_driver`` (``CompiledKernel``,
``CompileOptions``) in its tracer (``test/utils/kernel_tracer.py``); its trace-only tests
(``@pytest.mark.trace_only``) call ``ParserFrontend().compile(...)``, which traces and
compiles with nki-mlir; NEFF generation (``CompileOptions``) is not provided.  This package re-exports nki-mlir's compiler driver
names (:func:`nki_mlir.compiler.compile_kernel`, :class:`nki_mlir.compiler.CompiledKernel`,
:func:`nki_mlir.compiler.resolve_target`) and the Beta 1 allocation controls of
:mod:`nki_mlir.beta1.compiler` (``sbuf``, ``psum``, ``enable_stack_allocator``,
``skip_middle_end_transformations``, ...); the Neuron-compiler-only classes in
``frontend`` / ``ncc_driver`` raise :class:`NotImplementedError` when used, except
``ParserFrontend.compile`` (see :mod:`nki_cpu_simulator.nki.compiler._standins`).

Doc: NKI CPU simulator guide (aws-neuron-sdk ``nki/guides/nki_simulator.rst``).
"""
from __future__ import annotations

from nki_mlir.beta1.compiler import (  # noqa: F401
    enable_stack_allocator,
    force_auto_alloc,
    multi_buffer,
    no_reorder,
    psum,
    sbuf,
    skip_middle_end_transformations,
)
from nki_mlir.compiler import CompiledKernel, compile_kernel, resolve_target  # noqa: F401

__all__ = ["CompiledKernel", "compile_kernel", "resolve_target", "sbuf", "psum",
           "enable_stack_allocator", "force_auto_alloc", "skip_middle_end_transformations",
           "multi_buffer", "no_reorder"]
