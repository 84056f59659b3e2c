"""JAX tracers as kernel arguments: a kernel called inside ``jax.jit`` runs as a
``jax.pure_callback`` (:func:`jax_call`), whose result shapes and dtypes are those of the
kernel compiled for the arguments' shapes and dtypes.  JAX stays optional: nothing here
imports it before it is called.

Doc: AWS ``nki.jit`` (nki/api/nki) detects the framework from the arguments and returns its
arrays; JAX ``jax.pure_callback``.
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .. import dtypes


def has_jax_tracer(args: tuple, kwargs: dict) -> bool:
    """Whether an argument is a JAX tracer (the kernel is called inside ``jax.jit`` & co.)."""
    for v in (*args, *kwargs.values()):
        mod = type(v).__module__ or ""
        if mod.startswith(("jax", "jaxlib")) and "Tracer" in type(v).__name__:
            return True
    return False


def jax_call(kernel: Any, args: tuple, kwargs: dict):
    """``kernel(*args, **kwargs)`` (``kernel``: a :class:`~nki_mlir.driver.jit.Kernel`) with
    JAX tracers among the arguments, as a
    ``jax.pure_callback`` whose result shapes/dtypes are the compiled kernel's outputs.
    Array arguments (JAX or NumPy) are the callback's operands; anything else is a
    compile-time constant."""
    import jax

    names = list(inspect.signature(getattr(kernel, "fn", kernel)).parameters)
    bound = dict(zip(names, args))
    bound.update(kwargs)
    arrays = {k: v for k, v in bound.items() if hasattr(v, "shape") and hasattr(v, "dtype")}
    consts = {k: v for k, v in bound.items() if k not in arrays}
    order = list(arrays)
    k = kernel
    empties = {n: np.empty(arrays[n].shape, dtypes.as_dtype(np.dtype(arrays[n].dtype)))
               for n in order}
    ck = k.compile_with((), {**empties, **consts})
    result_shapes = tuple(jax.ShapeDtypeStruct(o.shape, dtypes.BY_NAME[o.dtype])
                          for o in ck.spec.outputs)

    def host(*values):
        outs = ck(**{n: np.asarray(v) for n, v in zip(order, values)}, **consts)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return tuple(np.asarray(o) for o in outs)

    res = jax.pure_callback(host, result_shapes, *(arrays[n] for n in order))
    if ck.spec.returns_tuple:
        return tuple(res)
    return res[0] if res else None


__all__ = ["has_jax_tracer", "jax_call"]
