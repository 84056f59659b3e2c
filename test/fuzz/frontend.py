"""Frontend fuzzer: AST-mutated seed kernels (:mod:`.seeds`) compiled and run.

Case ``seed``: kernel ``SEEDS[seed % len]`` of ``seeds.py``, mutated by
:func:`~.mutate.mutate_kernel`, written to a file, imported and compiled (``use_cache=False``)
with its (sometimes mutated) arguments, then run on the interpreter.  Success or an
``NKIError`` with a location and not an internal error is fine; anything else is a finding.
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
import warnings

import numpy as np

from . import seeds
from .mutate import mutate_args, mutate_kernel

_SOURCE = open(seeds.__file__).read()
_NAMES = list(seeds.SEEDS)
_DIR = tempfile.mkdtemp(prefix="nki-fuzz-")


def _arrays(seed_spec: list, spec: list, rng) -> list:
    """Arrays for the tensor arguments of ``seed_spec`` (shapes/dtypes from ``spec``), the
    values of ``spec`` for the others."""
    from nki_mlir import dtypes
    out = []
    for orig, s in zip(seed_spec, spec):
        if isinstance(orig, tuple):
            shape, dt = s
            x = rng.standard_normal(shape)
            out.append(x.astype(np.float64 if dt == "float64" else dtypes.BY_NAME[dt]))
        else:
            out.append(s)
    return out


def classify(exc: BaseException) -> tuple[str, str]:
    """``(kind, detail)`` of an exception a case raised."""
    from nki_mlir.errors import NKIError
    text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    if not isinstance(exc, NKIError):
        return "internal", text
    if exc.category == "internal error" or "internal compiler error" in str(exc):
        return "internal", text
    if exc.loc is None or not exc.loc.file or exc.loc.line <= 0:
        return "unlocated", text
    return "located", text


def case(seed: int) -> tuple[str, str]:
    import nki_mlir as nki
    from nki_mlir.errors import NKIError
    name = _NAMES[seed % len(_NAMES)]
    src = mutate_kernel(_SOURCE, name, seed)
    if src is None:
        return "invalid", "mutant is not valid Python"
    path = os.path.join(_DIR, f"fuzz_{seed}.py")
    with open(path, "w") as fh:
        fh.write(src)
    try:
        spec = importlib.util.spec_from_file_location(f"nki_fuzz_{seed}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except Exception as exc:    # the module's own top level failed: not the compiler's case
        return "invalid", f"import: {type(exc).__name__}"
    args = _arrays(seeds.SEEDS[name], mutate_args(seeds.SEEDS[name], seed), np.random.default_rng(seed))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ck = nki.compile(getattr(mod, name), *args, use_cache=False)
            ck(*args)
        return "ok", ""
    except NKIError as exc:
        return classify(exc)
    except RecursionError as exc:
        return "internal", f"RecursionError: {str(exc)[:200]}"
    except Exception as exc:
        return classify(exc)
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
