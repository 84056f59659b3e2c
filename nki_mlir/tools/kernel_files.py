"""Kernel files and their arguments, for the command-line tools and the autotuner.

``path/to/file.py::kernel`` names a kernel of a file (:func:`load_kernel`, the file imported
after ``compat.install()``); ``--arg SHAPExDTYPE`` (:func:`parse_arg`) and ``--const
NAME=VALUE`` (:func:`parse_consts`) give its arguments, else the file's ``EXAMPLE_ARGS``
(:func:`example_args`); :func:`inputs` makes random arrays of them.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

_SHORT = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f8e4m3": "float8_e4m3",
          "f8e5m2": "float8_e5m2", "i8": "int8", "i16": "int16", "i32": "int32", "u8": "uint8",
          "u16": "uint16", "u32": "uint32", "i1": "bool_"}


def parse_arg(text: str) -> tuple[tuple[int, ...], np.dtype]:
    """``"128x512xbf16"`` -> ``((128, 512), bfloat16)``."""
    from .. import dtypes
    *dims, dt = text.split("x")
    if not dims:
        raise argparse.ArgumentTypeError(f"bad --arg {text!r}: expected SHAPExDTYPE like 128x512xf32")
    try:
        shape = tuple(int(d) for d in dims)
        dtype = dtypes.BY_NAME[_SHORT.get(dt, dt)]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"bad --arg {text!r}: expected SHAPExDTYPE like 128x512xf32") from None
    return shape, dtype


def parse_consts(items: list[str]) -> dict:
    """``["NAME=VALUE", ...]`` (``--const``) -> ``{NAME: Python literal}``."""
    consts = {}
    for c in items:
        k, eq, v = c.partition("=")
        try:
            if not (eq and k.isidentifier()):
                raise ValueError
            consts[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            raise SystemExit(f"nki-mlir: bad --const {c!r}: expected NAME=VALUE with a Python "
                             f"literal VALUE, e.g. --const scale=0.5") from None
    return consts


def load_module(path: str):
    """Import the kernel file ``path`` (after ``compat.install()``)."""
    from .. import compat
    compat.install()
    if not os.path.isfile(path):
        raise SystemExit(f"nki-mlir: no such file: {path}")
    mspec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if mspec is None or mspec.loader is None:
        raise SystemExit(f"nki-mlir: cannot import {path}")
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[mspec.name] = mod
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:  # the file's sibling modules import as in `python FILE`
        sys.path.insert(0, folder)
    mspec.loader.exec_module(mod)
    return mod


def file_kernels(mod) -> dict:
    """The ``@nki.jit`` kernels a module defines, by name."""
    from ..driver.jit import Kernel
    return {k: v for k, v in vars(mod).items() if isinstance(v, Kernel)}


def load_kernel(spec: str):
    """``path/to/file.py::kernel_name`` -> the kernel object (the file is imported)."""
    path, _, name = spec.partition("::")
    kernels = file_kernels(load_module(path))
    if not name:
        if len(kernels) != 1:
            raise SystemExit(f"nki-mlir: {path} defines {len(kernels)} kernels; name one with FILE::KERNEL "
                             f"({', '.join(kernels)})")
        name = next(iter(kernels))
    if name not in kernels:
        raise SystemExit(f"nki-mlir: no @nki.jit kernel named {name!r} in {path}")
    return kernels[name]


def example_args(spec: str, kernel) -> list[tuple[tuple[int, ...], np.dtype]]:
    """The kernel's ``EXAMPLE_ARGS`` entry in its file (parsed ``SHAPExDTYPE`` strings), or
    ``[]`` when the file lists none for it."""
    mod = sys.modules.get(Path(spec.partition("::")[0]).stem)
    examples = getattr(mod, "EXAMPLE_ARGS", {}) or {}
    return [parse_arg(a) for a in examples.get(kernel.fn.__name__, [])]


def inputs(args, rng) -> list[np.ndarray]:
    """Standard-normal arrays of the ``(shape, dtype)`` pairs ``args`` (booleans: ``x > 0``)."""
    out = []
    for shape, dt in args:
        x = rng.standard_normal(shape).astype(np.float32)
        out.append(x.astype(dt) if dt.kind != "b" else x > 0)
    return out
