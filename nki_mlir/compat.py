"""Run existing NKI code unmodified: map the ``nki`` module names onto nki-mlir's.

After :func:`install`, ``import nki``, ``import nki.language as nl``, ``import nki.isa as
nisa`` and ``import nki.typing as nt`` resolve to :mod:`nki_mlir`, :mod:`nki_mlir.language`,
:mod:`nki_mlir.isa` and :mod:`nki_mlir.typing`.  (The Beta 1 ``neuronxcc.nki`` names come
with the Beta 1 front.)
"""
from __future__ import annotations

import sys

_ALIASES = {
    "nki": "nki_mlir",
    "nki.language": "nki_mlir.language",
    "nki.isa": "nki_mlir.isa",
    "nki.typing": "nki_mlir.typing",
}


def install() -> None:
    """Register the aliases in ``sys.modules`` (idempotent).

    Raises:
        ImportError: another package already provides ``nki`` (a real Neuron install); we
            never shadow it silently.
    """
    import importlib

    existing = sys.modules.get("nki")
    if existing is not None and getattr(existing, "__name__", "") != "nki_mlir":
        raise ImportError("a different 'nki' module is already imported; nki_mlir.compat.install() "
                          "must run before it")
    for alias, target in _ALIASES.items():
        sys.modules[alias] = importlib.import_module(target)


def uninstall() -> None:
    """Remove the aliases installed by :func:`install`."""
    for alias in _ALIASES:
        mod = sys.modules.get(alias)
        if mod is not None and mod.__name__.startswith("nki_mlir"):
            del sys.modules[alias]
