"""PyTorch and JAX arrays in and out of kernels, without importing either library.

A kernel called with ``torch.Tensor`` arguments (CPU; any device is copied to the host)
gets NumPy views of them (no copy for CPU tensors, so a kernel that writes an input writes
the tensor), and returns ``torch.Tensor`` outputs; called with JAX arrays, it returns JAX
arrays.  A non-contiguous argument (a transposed or sliced array or tensor) runs as a
contiguous copy that is written back into it after the run (:func:`prepare_args`).  bfloat16 and float8 tensors travel as ``ml_dtypes`` arrays bit for bit (NumPy has
no such dtypes; torch's ``.numpy()`` refuses them).
"""
from __future__ import annotations

from typing import Any

import numpy as np


def framework(v: Any) -> str | None:
    """``"torch"`` / ``"jax"`` for a tensor of that library, else ``None``."""
    mod = type(v).__module__ or ""
    if mod.startswith("torch") and hasattr(v, "detach"):
        return "torch"
    if mod.startswith(("jax", "jaxlib")) and hasattr(v, "__array__"):
        return "jax"
    return None


def _torch_dtypes():
    import ml_dtypes
    import torch
    table = {torch.bfloat16: (torch.int16, ml_dtypes.bfloat16)}
    for tname, mname in (("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2")):
        if hasattr(torch, tname) and hasattr(ml_dtypes, mname):
            table[getattr(torch, tname)] = (torch.int8, getattr(ml_dtypes, mname))
    return table


def to_numpy(v: Any) -> Any:
    """A NumPy array for a torch / JAX tensor (``v`` itself for anything else)."""
    kind = framework(v)
    if kind == "torch":
        t = v.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        special = _torch_dtypes().get(t.dtype)
        if special is not None:
            bits, dt = special
            # a view of the same bytes whatever the strides (same element size): a strided
            # tensor becomes a strided array, which prepare_args copies and writes back
            return t.view(bits).numpy().view(dt)
        return t.numpy()
    if kind == "jax":
        return np.asarray(v)
    return v


def from_numpy(a: Any, kind: str | None) -> Any:
    """``a`` as a tensor of framework ``kind`` (``None``: unchanged)."""
    if kind is None or not isinstance(a, np.ndarray):
        return a
    if kind == "torch":
        import torch
        for tdt, (bits, dt) in _torch_dtypes().items():
            if a.dtype == np.dtype(dt):
                return torch.from_numpy(np.ascontiguousarray(a).view(np.dtype(f"int{8 * a.itemsize}"))).view(tdt)
        return torch.from_numpy(np.ascontiguousarray(a))
    import jax.numpy as jnp
    return jnp.asarray(a)


def convert_args(args: tuple, kwargs: dict) -> tuple[tuple, dict, str | None]:
    """``(args, kwargs)`` with torch / JAX tensors as NumPy arrays, and the framework the
    outputs go back to (the first one among the arguments; ``None``: NumPy)."""
    kind = next((k for k in map(framework, (*args, *kwargs.values())) if k), None)
    if kind is None:
        return args, kwargs, None
    return (tuple(to_numpy(a) for a in args), {k: to_numpy(v) for k, v in kwargs.items()}, kind)


def prepare_args(args: tuple, kwargs: dict):
    """:func:`convert_args`, then every non-C-contiguous NumPy argument replaced by a
    contiguous copy (the interpreter addresses HBM arguments as flat row-major storage).

    Returns ``(args, kwargs, kind, write_back)``: call ``write_back()`` after a successful
    run to copy each writeable argument's copy back into it (a kernel that writes an input
    writes the caller's array or tensor, as for a contiguous one).
    """
    args, kwargs, kind = convert_args(args, kwargs)
    copies: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def contiguous(v: Any) -> Any:
        if not isinstance(v, np.ndarray) or v.flags.c_contiguous:
            return v
        if id(v) not in copies:
            copies[id(v)] = (v, np.ascontiguousarray(v))
        return copies[id(v)][1]

    args = tuple(contiguous(a) for a in args)
    kwargs = {k: contiguous(v) for k, v in kwargs.items()}

    def write_back() -> None:
        for orig, copy in copies.values():
            if orig.flags.writeable:
                np.copyto(orig, copy)

    return args, kwargs, kind, write_back
