"""Run existing NKI code unmodified: map the ``nki`` module names onto nki-mlir's.

After :func:`install`, ``import nki``, ``import nki.language as nl``, ``import nki.isa as
nisa`` and ``import nki.typing as nt`` resolve to :mod:`nki_mlir`, :mod:`nki_mlir.language`,
:mod:`nki_mlir.isa` and :mod:`nki_mlir.typing`; the Beta 1 spellings ``neuronxcc.nki``,
``neuronxcc.nki.language``, ``neuronxcc.nki.isa`` and ``neuronxcc.nki.typing`` resolve to
the Beta 1 front (:mod:`nki_mlir.beta1`: value-returning ``nisa``, ``nl.arange`` /
``nl.mgrid``, masks, tile operators) and ``neuronxcc.nki.compiler`` to its ``ncc``.

``python -m nki_mlir.compat script.py [args]`` runs a script with the aliases installed.
"""
from __future__ import annotations

import sys

_ALIASES = {
    "nki": "nki_mlir",
    "nki.language": "nki_mlir.language",
    "nki.isa": "nki_mlir.isa",
    "nki.typing": "nki_mlir.typing",
    "nki.isa.constants": "nki_mlir.isa_constants",
    "nki.language.dtypes": "nki_mlir.dtypes",
    "nki.collectives": "nki_mlir.collectives",
    "neuronxcc.nki": "nki_mlir.beta1",
    "neuronxcc.nki.language": "nki_mlir.beta1.language",
    "neuronxcc.nki.isa": "nki_mlir.beta1.isa",
    "neuronxcc.nki.typing": "nki_mlir.typing",
    "neuronxcc.nki.compiler": "nki_mlir.beta1.compiler",
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
    if "neuronxcc" not in sys.modules:
        import types
        pkg = types.ModuleType("neuronxcc", "nki-mlir's stand-in for the Neuron compiler package")
        pkg.__path__ = []  # a package, so `import neuronxcc.nki` works
        pkg.nki = sys.modules["neuronxcc.nki"]  # type: ignore[attr-defined]
        sys.modules["neuronxcc"] = pkg


def uninstall() -> None:
    """Remove the aliases installed by :func:`install`."""
    for alias in _ALIASES:
        mod = sys.modules.get(alias)
        if mod is not None and mod.__name__.startswith("nki_mlir"):
            del sys.modules[alias]
    pkg = sys.modules.get("neuronxcc")
    if pkg is not None and getattr(pkg, "__doc__", "").startswith("nki-mlir's stand-in"):
        del sys.modules["neuronxcc"]


def main(argv: list[str] | None = None) -> int:
    """``python -m nki_mlir.compat script.py [args]``: run an unmodified NKI script.

    The script runs as ``__main__`` with ``sys.argv = [script, *args]`` and its directory
    first on ``sys.path`` (as ``python script.py`` does).  Exit status: the script's own
    (``sys.exit``), 0 when it finishes, 1 with the located message (no traceback) when a
    kernel error (:class:`~nki_mlir.errors.NKIError`) escapes it, 2 for a usage error (no
    script given, or the script does not exist).  ``-h`` / ``--help`` print the usage.
    """
    import os
    import runpy
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m nki_mlir.compat script.py [args...]"
    if args and args[0] in ("-h", "--help"):
        print(usage)
        return 0
    if not args:
        print(usage, file=sys.stderr)
        return 2
    script = args[0]
    if not os.path.exists(script):
        print(f"python -m nki_mlir.compat: can't open file '{script}': no such file", file=sys.stderr)
        return 2
    install()
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    from .errors import NKIError
    try:
        runpy.run_path(script, run_name="__main__")
    except NKIError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
