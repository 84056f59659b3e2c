"""A kernel as a framework op: a ``torch.library`` custom op, and JAX arrays under ``jax.jit``.

- :func:`torch_custom_op` registers an ``@nki.jit`` kernel as a PyTorch custom op
  (``torch.library.custom_op``) with a fake (meta) implementation, so ``torch.compile``
  traces through it: the fake implementation compiles the kernel for the input shapes and
  dtypes (nki-mlir's compile cache keeps the artifact) and returns empty tensors of the
  output shapes and dtypes; the real one runs the kernel on nki-mlir's interpreter.
- :func:`jax_call` runs a kernel whose arguments include JAX tracers (inside ``jax.jit``)
  through ``jax.pure_callback``: the result shapes come from compiling the kernel for the
  arguments' shapes and dtypes, the callback runs it on NumPy arrays.  ``Kernel.__call__``
  uses it automatically; eager JAX arrays go through :mod:`nki_mlir.interop` directly
  (both live in :mod:`.jax_call`, which the kernel objects import).

torch and JAX stay optional: nothing here imports them before it is called.

Doc: AWS ``nki.jit`` (nki/api/nki) detects the framework from the arguments and returns
its arrays; PyTorch ``torch.library.custom_op`` / ``register_fake``; JAX
``jax.pure_callback``.
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .. import dtypes
from .jax_call import has_jax_tracer, jax_call  # noqa: F401  (part of this module's API)


def _torch_dtype(name: str):
    import torch
    return torch.bool if name == "bool" else getattr(torch, name)


def _np_dtype_of_torch(t) -> np.dtype:
    return dtypes.as_dtype(str(t.dtype).removeprefix("torch."))


def _output_specs(kernel, shapes_dtypes: list[tuple[tuple[int, ...], np.dtype]], consts: dict):
    """The kernel's outputs (OutputSpec) for tensor arguments of these shapes/dtypes, from
    nki-mlir's compile (cached)."""
    from .entry import unwrap
    from .jit import Kernel
    k = unwrap(kernel)
    k = k if isinstance(k, Kernel) else Kernel(k)
    arrays = [np.empty(s, d) for s, d in shapes_dtypes]
    ck = k.compile_with(tuple(arrays), consts)
    return ck.spec.outputs, ck.spec.returns_tuple


def torch_custom_op(kernel: Any, name: str, *, mutates_args: tuple[str, ...] = (),
                    outputs: int = 1):
    """Register ``kernel`` (an ``@nki.jit`` kernel whose parameters are all tensors) as the
    PyTorch custom op ``name`` (``"namespace::op"``) and return it.

    The op takes the kernel's parameters as ``Tensor`` arguments (by position) and returns
    ``outputs`` tensors (one ``Tensor``, or a tuple for ``outputs > 1``), as the kernel
    returns them.  ``mutates_args`` names the parameters the kernel writes in place.  Call it
    as ``op(a, b)`` or ``torch.ops.namespace.op(a, b)``; it works under ``torch.compile``.

    Raises:
        ValueError: ``outputs`` < 1.
        NKIError: from the fake implementation (under ``torch.compile``) or a call: any
            error of the kernel, located at its source line.
    """
    import torch
    from .entry import unwrap

    if outputs < 1:
        raise ValueError(f"torch_custom_op({name!r}): outputs must be >= 1, got {outputs}")
    fn = getattr(unwrap(kernel), "fn", unwrap(kernel))
    params = list(inspect.signature(fn).parameters)
    ins = ", ".join(f"Tensor{'(a!)' if p in mutates_args else ''} {p}" for p in params)
    outs = "Tensor" if outputs == 1 else "(" + ", ".join(["Tensor"] * outputs) + ")"
    schema = f"({ins}) -> {outs}"

    def real(*args):
        r = kernel(*args)
        if outputs == 1:
            return r[0] if isinstance(r, tuple) else r
        return tuple(r)

    def fake(*args):
        specs, _ = _output_specs(kernel, [(tuple(a.shape), _np_dtype_of_torch(a)) for a in args], {})
        made = tuple(torch.empty(o.shape, dtype=_torch_dtype(o.dtype)) for o in specs)
        return made[0] if outputs == 1 else made

    op = torch.library.custom_op(name, real, mutates_args=tuple(mutates_args), schema=schema)
    op.register_fake(fake)
    return op


__all__ = ["torch_custom_op", "jax_call", "has_jax_tracer"]
