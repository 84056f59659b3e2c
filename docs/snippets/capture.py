"""Re-run every command the Getting started and Pipeline pages show and write their output
next to this file (``*.out``), which the pages include verbatim.

    python docs/snippets/capture.py            # from the repo root

The commands run in a fresh ``/tmp/nki-start`` (the directory the pages name) with
``NKI_MLIR_CACHE_DIR=/tmp/nki-start/cache``; ``nki-mlir`` / ``nki-opt`` are run as
``python -m nki_mlir.tools.cli`` / ``python -m nki_mlir.tools.nki_opt`` (what the console
scripts call).  ``test/python/test_docs_build.py`` runs it into a temporary directory and
compares the deterministic outputs with these files.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKDIR = Path("/tmp/nki-start")
INPUTS = ["add_kernel.py", "first_compile.py", "exp_rows.py", "diagnostics_kernels.py",
          "diagnostics.py"]

#: (output file, command as the pages show it); a command may start with NAME=VALUE
#: assignments and end with "> /dev/null" (then only stderr is shown)
COMMANDS = [
    ("add_run.out", "python add_kernel.py"),
    ("first_compile.out", "python first_compile.py"),
    ("add_cli_nki.out", "nki-mlir compile add_kernel.py::nki_tensor_add_kernel --stage nki"),
    ("add_cli_run.out", "nki-mlir run add_kernel.py::nki_tensor_add_kernel"),
    ("add_profile.out", "nki-mlir profile add_kernel.py::nki_tensor_add_kernel"),
    ("add.nki.mlir", "nki-mlir compile add_kernel.py::nki_tensor_add_kernel --stage nki"),
    ("add_opt.out", "nki-opt add.nki.mlir -p nki-legalize,lower-nki-to-nisa,nisa-allocate,"
                    "nisa-schedule --print-deps"),
    ("add_opt_time.out", "nki-opt add.nki.mlir -p nki-legalize,lower-nki-to-nisa,nisa-allocate,"
                         "nisa-schedule --time-passes -o /dev/null"),
    ("exp_rows.nki.mlir", "nki-mlir compile exp_rows.py::exp_rows --stage nki"),
    ("exp_rows.legal.mlir", "nki-opt exp_rows.nki.mlir -p nki-legalize"),
    ("exp_rows.nisa.mlir", "nki-opt exp_rows.legal.mlir -p lower-nki-to-nisa"),
    ("exp_rows.placed.mlir", "nki-opt exp_rows.nisa.mlir -p nisa-allocate"),
    ("exp_rows.sched.mlir", "nki-opt exp_rows.placed.mlir -p nisa-schedule --print-deps"),
    ("exp_rows_profile.out", "nki-mlir profile exp_rows.py::exp_rows --arg 1024x512xf32 --compare "
                             "--out prof"),
    ("cli_nisa.out", "nki-mlir compile exp_rows.py::exp_rows --arg 256x64xf32 --stage nisa --schedule in-order"),
    ("cli_explain.out", "NKI_MLIR_EXPLAIN_LOOPS=1 nki-mlir compile exp_rows.py::exp_rows --stage nki > /dev/null"),
    ("cli_bad_stage.out", "nki-mlir compile add_kernel.py::nki_tensor_add_kernel --stage llvm"),
    ("cli_cache_info.out", "nki-mlir cache info"),
    ("opt_after.out", "nki-opt exp_rows.nki.mlir -p nki-legalize,lower-nki-to-nisa "
                      "--print-ir-after=nki-legalize -o /dev/null"),
    ("diagnostics.out", "python diagnostics.py"),
    ("opt_bad_pass.out", "nki-opt add.nki.mlir -p nki-legalize,lower-nki-to-nisa,nisa-alocate"),
    ("opt_bad_option.out", "nki-opt add.nki.mlir -p nisa-schedule{mode=fast}"),
]

#: commands that must fail, with their exit status
EXIT = {"opt_bad_pass.out": 1, "opt_bad_option.out": 1, "cli_bad_stage.out": 2}

#: outputs that hold timings or random values: checked to run, not compared
VOLATILE = {"add_cli_run.out", "add_opt_time.out"}

TOOLS = {"nki-mlir": "nki_mlir.tools.cli", "nki-opt": "nki_mlir.tools.nki_opt"}


def argv(command: str) -> tuple[dict[str, str], list[str]]:
    """The environment assignments a command starts with, and its argv."""
    words = command.removesuffix(" > /dev/null").split()
    env = {}
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if words[0] == "python":
        return env, [sys.executable, *words[1:]]
    return env, [sys.executable, "-m", TOOLS[words[0]], *words[1:]]


def capture(out_dir: Path, workdir: Path = WORKDIR) -> list[str]:
    """Run every command in a fresh ``workdir``; write each one's stdout + stderr to
    ``out_dir``.  Returns the names of the files written.  Raises RuntimeError when a
    command fails."""
    with open(f"{workdir}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)       # another checkout's test may be capturing
        return _capture(out_dir, workdir)


def _capture(out_dir: Path, workdir: Path) -> list[str]:
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    for name in INPUTS:
        shutil.copy(HERE / name, workdir / name)
    env = {**os.environ, "NKI_MLIR_CACHE_DIR": str(workdir / "cache"), "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p)}
    written = []
    for out, command in COMMANDS:
        extra, args = argv(command)
        proc = subprocess.run(args, cwd=workdir, env={**env, **extra}, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != EXIT.get(out, 0):
            raise RuntimeError(f"`{command}` exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
        (workdir / out).write_text(proc.stdout)          # later commands read the .mlir files
        shown = "" if command.endswith("> /dev/null") else proc.stdout
        (out_dir / out).write_text(shown + proc.stderr)
        written.append(out)
    return written


if __name__ == "__main__":
    print("\n".join(capture(HERE)))
