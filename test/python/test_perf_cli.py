"""``nki-mlir profile``: the cost model's report from the command line, its files, and the
errors a user can make."""
import json
import os

import pytest

from nki_mlir.perf.trace import validate_trace
from nki_mlir.tools.cli import main

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
KERNELS = os.path.join(ROOT, "examples", "kernels.py")
MATMUL = os.path.join(ROOT, "examples", "matmul.py")


def test_profile_prints_the_report_and_writes_files(tmp_path, capsys):
    out = tmp_path / "prof"
    rc = main(["profile", f"{KERNELS}::row_softmax", "--arg", "512x1024xf32", "--compare",
               "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "kernel row_softmax on trn2 (schedule: list)" in text
    for needle in ("estimated latency", "roofline bound", "estimate / bound", "MFU", "MBU",
                   "critical path", "kernels.py:", "in-order schedule:", "faster than in-order"):
        assert needle in text, needle
    trace = json.loads((out / "row_softmax.trace.json").read_text())
    assert validate_trace(trace) == []
    assert 'data-track="vector"' in (out / "row_softmax.html").read_text()
    assert (out / "row_softmax.txt").read_text().startswith("kernel row_softmax")


def test_profile_uses_the_files_example_args(capsys):
    rc = main(["profile", f"{MATMUL}::single_dma", "--target", "trn1"])
    text = capsys.readouterr().out
    assert rc == 0 and "kernel single_dma on trn1" in text
    assert "busiest DMA engine" in text  # one DMA engine moves everything


def test_profile_needs_arguments(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("import nki_mlir as nki\nimport nki_mlir.language as nl\nimport nki_mlir.isa as nisa\n\n"
                   "@nki.jit\ndef k(x):\n    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)\n"
                   "    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)\n"
                   "    nisa.dma_copy(dst=t, src=x)\n    nisa.dma_copy(dst=out, src=t)\n    return out\n")
    with pytest.raises(SystemExit, match="give the arguments of k with --arg"):
        main(["profile", str(src)])
    with pytest.raises(SystemExit, match="no such file"):
        main(["profile", str(tmp_path / "missing.py")])


def test_profile_reports_kernel_errors_located(tmp_path, capsys):
    rc = main(["profile", f"{KERNELS}::row_softmax", "--arg", "128x100000xf32"])
    err = capsys.readouterr().err
    assert rc == 1 and "kernels.py:" in err and "^" in err and "Traceback" not in err
