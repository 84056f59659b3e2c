"""pytest plugin: stand-ins for modules the public nki-library snapshot imports but lacks.

Use: ``pytest -p nki_cpu_simulator.stubs test --test-mode simulation`` (from the
nki-library checkout).  Loaded before the suite's ``conftest.py``, it registers:

- ``nki`` and its submodules -> :mod:`nki_cpu_simulator.nki` (nki-mlir), only if no
  ``nki`` package is installed.  The suite's ``conftest.py`` imports ``nki.isa`` at import
  time (``test/utils/common_dataclasses.py``), before its simulation mode aliases ``nki``
  to the simulator, so without a Neuron ``nki`` wheel the name must already resolve;
  ``--test-mode simulation`` then re-aliases the same modules;
- ``neuronxcc`` (the Neuron compiler package; kernels and tests import
  ``neuronxcc.nki.typing``) -> the Beta 1 names nki-mlir's :mod:`nki_mlir.compat` maps
  (``neuronxcc.nki`` -> :mod:`nki_mlir.beta1`, ``neuronxcc.nki.typing`` ->
  :mod:`nki_mlir.typing`, ...), only if no ``neuronxcc`` is installed;
- ``neuron_dtypes`` -> :mod:`nki_cpu_simulator.neuron_dtypes` (an ml_dtypes-based
  stand-in for AWS's internal ``neuron_dtypes`` package), only if ``import neuron_dtypes``
  fails;
- ``test.utils.perf_analysis_private`` -> a module whose ``analyze_trace`` raises
  :class:`NotImplementedError`.  ``test/utils/test_orchestrator.py`` imports it at import
  time (so every test, via ``conftest.py``, needs it), but the file is private to AWS and
  not in the public snapshot; it is only called with ``--enable-perf-analysis`` on
  hardware.  Registered only if the snapshot does not have the file;
- ``test.utils.scripts.remote_lock_scripts`` (and its package) -> a module whose
  ``LockStatus`` / ``LockResult`` raise :class:`NotImplementedError` on any use.
  ``test/utils/core_lock_client.py`` (imported by ``conftest.py`` via
  ``host_management.py``) imports them at import time; they implement the remote-host
  core locking of hardware runs and the file is absent from the public snapshot.
  Registered only if the snapshot does not have the file.

Nothing else is changed: the suite's own ``--test-mode simulation`` then imports
:mod:`nki_cpu_simulator` (this package) as its NkiCpuSimulator.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

PERF_ANALYSIS_PRIVATE = "test.utils.perf_analysis_private"


def _install_neuron_dtypes() -> None:
    if "neuron_dtypes" in sys.modules:
        return
    try:
        if importlib.util.find_spec("neuron_dtypes") is not None:
            return  # the real package is installed
    except (ImportError, ValueError):
        pass
    sys.modules["neuron_dtypes"] = importlib.import_module("nki_cpu_simulator.neuron_dtypes")


#: ``nki`` module names -> nki_cpu_simulator modules (as test/utils/simulation_setup.py
#: aliases them, plus ``nki.language.dtypes`` and ``nki.collectives``).
NKI_ALIASES = {
    "nki": "nki_cpu_simulator.nki",
    "nki.language": "nki_cpu_simulator.nki.language",
    "nki.language.dtypes": "nki_cpu_simulator.nki.language.dtypes",
    "nki.isa": "nki_cpu_simulator.nki.isa",
    "nki.isa.constants": "nki_cpu_simulator.nki.isa.constants",
    "nki.typing": "nki_cpu_simulator.nki.typing",
    "nki.compiler": "nki_cpu_simulator.nki.compiler",
    "nki.dtype": "nki_cpu_simulator.nki.language.dtypes",
    "nki.tensor": "nki_cpu_simulator.nki.tensor",
    "nki.collectives": "nki_cpu_simulator.nki.collectives",
}


def _install_nki() -> None:
    if "nki" in sys.modules:
        return
    try:
        if importlib.util.find_spec("nki") is not None:
            return  # a Neuron nki package is installed: leave it to the suite's conftest
    except (ImportError, ValueError):
        pass
    for alias, target in NKI_ALIASES.items():
        sys.modules[alias] = importlib.import_module(target)


def _install_neuronxcc() -> None:
    if "neuronxcc" in sys.modules:
        return
    try:
        if importlib.util.find_spec("neuronxcc") is not None:
            return
    except (ImportError, ValueError):
        pass
    from nki_mlir.compat import _ALIASES  # the Beta 1 spellings nki-mlir maps
    pkg = types.ModuleType("neuronxcc", "nki-mlir's stand-in for the Neuron compiler package "
                           "(registered by nki_cpu_simulator.stubs)")
    pkg.__path__ = []  # type: ignore[attr-defined]
    sys.modules["neuronxcc"] = pkg
    for alias, target in _ALIASES.items():
        if alias.startswith("neuronxcc."):
            sys.modules[alias] = importlib.import_module(target)
    pkg.nki = sys.modules["neuronxcc.nki"]  # type: ignore[attr-defined]


def _analyze_trace(*args, **kwargs):
    raise NotImplementedError(
        "test.utils.perf_analysis_private.analyze_trace is AWS-internal and not in the public "
        "nki-library snapshot; nki_cpu_simulator.stubs provides only this import-time stand-in "
        "(do not pass --enable-perf-analysis)")


class _NotProvidedMeta(type):
    """Metaclass of the lock stand-ins: any class attribute (``LockStatus.ALLOCATED``) raises."""

    def __getattr__(cls, name):
        _not_provided(f"{cls.__qualname__}.{name}")


def _not_provided(what: str):
    raise NotImplementedError(
        f"test.utils.scripts.remote_lock_scripts.{what}: the remote-host core-locking helpers "
        f"of hardware runs are not in the public nki-library snapshot; nki_cpu_simulator.stubs "
        f"provides only an import-time stand-in (use --test-mode simulation)")


class LockStatus(metaclass=_NotProvidedMeta):
    """Stand-in for ``remote_lock_scripts.LockStatus``: any use raises NotImplementedError."""

    def __init__(self, *args, **kwargs):
        _not_provided("LockStatus")


class LockResult(metaclass=_NotProvidedMeta):
    """Stand-in for ``remote_lock_scripts.LockResult``: any use raises NotImplementedError."""

    def __init__(self, *args, **kwargs):
        _not_provided("LockResult")


REMOTE_LOCK_SCRIPTS = "test.utils.scripts.remote_lock_scripts"


def _has(rootdir: Path | None, rel: str) -> bool:
    if rootdir is None:
        return False
    return any((base / rel).exists() for base in (rootdir, rootdir.parent))


def _install_remote_lock_scripts(rootdir: Path | None) -> None:
    if REMOTE_LOCK_SCRIPTS in sys.modules or _has(rootdir, "test/utils/scripts/remote_lock_scripts.py"):
        return
    doc = ("nki_cpu_simulator.stubs stand-in for test.utils.scripts.remote_lock_scripts "
           "(LockStatus / LockResult raise NotImplementedError)")
    if not _has(rootdir, "test/utils/scripts/__init__.py") and "test.utils.scripts" not in sys.modules:
        pkg = types.ModuleType("test.utils.scripts", doc)
        pkg.__path__ = []  # type: ignore[attr-defined]
        sys.modules["test.utils.scripts"] = pkg
    mod = types.ModuleType(REMOTE_LOCK_SCRIPTS, doc)
    mod.LockStatus = LockStatus  # type: ignore[attr-defined]
    mod.LockResult = LockResult  # type: ignore[attr-defined]
    sys.modules[REMOTE_LOCK_SCRIPTS] = mod


def _install_perf_analysis_private(rootdir: Path | None) -> None:
    if PERF_ANALYSIS_PRIVATE in sys.modules or _has(rootdir, "test/utils/perf_analysis_private.py"):
        return
    mod = types.ModuleType(PERF_ANALYSIS_PRIVATE, "nki_cpu_simulator.stubs stand-in for the "
                           "AWS-internal test.utils.perf_analysis_private (analyze_trace raises "
                           "NotImplementedError)")
    mod.analyze_trace = _analyze_trace  # type: ignore[attr-defined]
    sys.modules[PERF_ANALYSIS_PRIVATE] = mod


def pytest_load_initial_conftests(early_config, parser, args):
    """Register the stand-ins before the suite's conftest.py is imported."""
    _install_nki()
    _install_neuronxcc()
    _install_neuron_dtypes()
    rootdir = None
    for a in args:
        p = Path(a.split("::")[0])
        if not a.startswith("-") and p.exists():
            rootdir = (p if p.is_dir() else p.parent).resolve()
            break
    _install_perf_analysis_private(rootdir or Path.cwd())
    _install_remote_lock_scripts(rootdir or Path.cwd())


# also when imported outside pytest's hook order (e.g. `python -c "import nki_cpu_simulator.stubs"`)
_install_neuron_dtypes()


def pytest_sessionstart(session):
    """Work around a harness defect of the snapshot in simulation mode.

    ``test/utils/test_orchestrator.py`` sets ``Orchestrator._compiled_kernel`` only in its
    compile step, which simulation mode skips, then reads it after inference
    (``_rename_neff_outputs_to_python_names``): every simulation test would end in
    ``AttributeError``.  Giving the class the attribute's "no compiled kernel" value
    (``None``, which that method already handles) fixes it; nothing else is touched.
    """
    orch = sys.modules.get("test.utils.test_orchestrator")
    cls = getattr(orch, "Orchestrator", None)
    if cls is not None and not hasattr(cls, "_compiled_kernel"):
        cls._compiled_kernel = None
