"""Collect AWS's nki-library test suite in simulation mode with nki-mlir as the simulator.

Runs, in a subprocess, from the nki-library checkout (``--root``, default
``../shared/corpus/nki-library`` next to the checkout) with ``src/`` on ``PYTHONPATH``::

    python -m pytest --collect-only -q -p nki_cpu_simulator.stubs -p no:cacheprovider \
        test --test-mode simulation --ignore=<each file in IGNORED> [--skip-coverage-parametrize]

``--test-mode simulation`` is the suite's own switch (test/conftest.py): it imports
``test/utils/simulation_setup.py``, which imports ``nki_cpu_simulator`` (this repository's
shim over nki-mlir) and aliases the ``nki`` modules to it.  ``-p nki_cpu_simulator.stubs``
registers stand-ins for modules the public snapshot lacks (``nki``/``neuronxcc`` when no
Neuron wheel is installed, ``neuron_dtypes``, ``test.utils.perf_analysis_private``,
``test.utils.scripts.remote_lock_scripts``).  Test files that cannot import because of
defects in the snapshot itself (see ``IGNORED``) are passed as ``--ignore``.

Prints the number of test files, tests collected and collection errors (and the first
lines of each error), and exits 0 iff there were no collection errors.

    python bench/nkilib_collect.py [--root DIR] [--fast] [--no-ignore] [--show-errors N]
                                   [-- extra pytest args]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "nki-library"
#: Test files ignored by default: defects of the public nki-library snapshot itself, not of
#: the simulator (each fails to import with any NKI implementation).  ``--no-ignore`` keeps them.
IGNORED = {
    "test/unit/test_file_classifier.py":
        "imports build-tools/bin/file_classifier.py; build-tools/ is not in the snapshot",
    "test/integration/nkilib/core/mlp/test_mlp_cte.py":
        "src/nkilib_src/nkilib/core/mlp/mlp.py line 203: IndentationError (duplicated docstring text)",
    "test/integration/nkilib/core/mlp/test_mlp_tkg.py":
        "src/nkilib_src/nkilib/core/mlp/mlp.py line 203: IndentationError (duplicated docstring text)",
    "test/integration/nkilib/experimental/transformer/test_transformer_tkg.py":
        "imports src/nkilib_src/nkilib/core/mlp/mlp.py (IndentationError at line 203)",
    "test/integration/nkilib/core/qkv/test_qkv_tkg.py":
        "NameError: uses Platforms (line 929) without importing it",
    "test/integration/nkilib/experimental/subkernels/test_topk_reduce.py":
        "imports nkilib_src.nkilib.experimental.subkernels, which the snapshot does not have",
}


def collect_command(extra: list[str] | None = None, ignore: bool = True,
                    fast: bool = False) -> list[str]:
    """The pytest command line (run with cwd = the nki-library root).

    ``fast``: add the suite's ``--skip-coverage-parametrize`` (every module is still
    imported, but ``@pytest.mark.coverage_parametrize`` tests are not generated: their
    pairwise generation with allpairspy is what makes a full collection take minutes).
    """
    return [sys.executable, "-m", "pytest", "--collect-only", "-q",
            "-p", "nki_cpu_simulator.stubs", "-p", "no:cacheprovider",
            "test", "--test-mode", "simulation",
            *([f"--ignore={p}" for p in IGNORED] if ignore else []),
            *(["--skip-coverage-parametrize"] if fast else []), *(extra or [])]


def collect_env(root: Path) -> dict[str, str]:
    """Environment: ``<root>/src`` (``nkilib_src``) on PYTHONPATH, the interpreter's scripts
    (``ruff``) on PATH, no ``__pycache__`` or ruff cache written into the checkout."""
    env = dict(os.environ)
    paths = [str(root / "src"), str(Path(__file__).resolve().parent.parent)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")  # leave the corpus checkout untouched
    # the interpreter's scripts first on PATH, as in an activated venv (the unit tests run `ruff`)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("RUFF_CACHE_DIR", str(Path(tempfile.gettempdir()) / "nkilib_ruff_cache"))
    return env


_SUMMARY = re.compile(r"(?:(\d+) tests? collected)|(?:(\d+) errors?)|(?:no tests collected)")


def parse(stdout: str) -> dict:
    """``{"files", "tests", "errors", "error_files"}`` from ``pytest --collect-only -q`` output."""
    tests = [ln for ln in stdout.splitlines() if "::" in ln and not ln.startswith(("ERROR", "FAILED"))]
    files = {t.split("::", 1)[0] for t in tests}
    error_files = [ln.split(" ", 2)[1] for ln in stdout.splitlines()
                   if ln.startswith("ERROR ") and len(ln.split(" ", 2)) > 1]
    if not error_files:
        error_files = ["test/" + f for f in re.findall(r"^_+ ERROR collecting (\S+) _+$", stdout, re.M)]
    n_tests, n_errors = len(tests), len(set(error_files))
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    for m in _SUMMARY.finditer(last):
        if m.group(1):
            n_tests = int(m.group(1))
        if m.group(2):
            n_errors = max(n_errors, int(m.group(2)))
    if n_errors == 0 and re.search(r"^ImportError while loading conftest|^INTERNALERROR", stdout, re.M):
        n_errors = 1
        error_files.append("test/conftest.py")
    files |= set(error_files)
    return {"files": len(files), "tests": n_tests, "errors": n_errors,
            "error_files": sorted(set(error_files)), "summary": last}


def run(root: Path = DEFAULT_ROOT, extra: list[str] | None = None, timeout: float = 1800,
        ignore: bool = True, fast: bool = False) -> tuple[dict, subprocess.CompletedProcess]:
    proc = subprocess.run(collect_command(extra, ignore, fast), cwd=root, env=collect_env(root),
                          capture_output=True, text=True, timeout=timeout)
    return parse(proc.stdout), proc


def parse_suite_args(ap: argparse.ArgumentParser, argv: list[str] | None):
    """``ap``'s arguments plus the extra pytest arguments, or None (said on stderr) when
    ``--root`` holds no nki-library test suite (shared by the nkilib benches)."""
    ap.add_argument("extra", nargs="*", help="extra pytest arguments (after --)")
    ns = ap.parse_args(argv)
    if not (ns.root / "test" / "conftest.py").exists():
        print(f"nki-library test suite not found under {ns.root}", file=sys.stderr)
        return None
    return ns


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="nki-library checkout")
    ap.add_argument("--show-errors", type=int, default=40,
                    help="lines of pytest output to show per collection error")
    ap.add_argument("--fast", action="store_true",
                    help="--skip-coverage-parametrize: import every test module but do not "
                         "generate coverage_parametrize tests (~30 s instead of ~10 min)")
    ap.add_argument("--no-ignore", action="store_true",
                    help="also collect the test files with snapshot defects (see IGNORED)")
    ns = parse_suite_args(ap, argv)
    if ns is None:
        return 2
    t0 = time.perf_counter()
    res, proc = run(ns.root, ns.extra, ignore=not ns.no_ignore, fast=ns.fast)
    if res["errors"] == 0 and proc.returncode not in (0, 5):  # conftest failed to load, usage error
        res = parse(proc.stdout + "\n" + proc.stderr)
        res["errors"] = max(res["errors"], 1)
    dt = time.perf_counter() - t0
    print(f"command: (cd {ns.root} && PYTHONPATH={ns.root / 'src'} python "
          f"{' '.join(collect_command(ns.extra, not ns.no_ignore, ns.fast)[1:])})")
    if not ns.no_ignore:
        print(f"ignored {len(IGNORED)} test files with defects of the nki-library snapshot itself:")
        for f, why in IGNORED.items():
            print(f"  {f}: {why}")
    print(f"pytest exit status {proc.returncode}; {dt:.1f}s; pytest summary: {res['summary']}")
    if res["errors"] or proc.returncode not in (0, 5):
        out = proc.stdout + proc.stderr
        blocks = re.split(r"(?m)^(?=_+ ERROR collecting )", out)
        for b in blocks[1:]:
            print("\n".join(b.splitlines()[:ns.show_errors]))
        if not blocks[1:]:
            print("\n".join(out.splitlines()[-ns.show_errors:]))
    print(f"test files: {res['files']}")
    print(f"tests collected: {res['tests']}")
    print(f"collection errors: {res['errors']}")
    for f in res["error_files"]:
        print(f"  error: {f}")
    return 0 if res["errors"] == 0 and proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
