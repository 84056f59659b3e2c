"""Progress bars: on a terminal (or NKI_MLIR_PROGRESS=1) for a large compile, silent otherwise."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir import progress
from nki_mlir.driver import compile as compiler  # where compile_kernel looks names up


@nki.jit
def many_tiles(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        if i % 2 == 0:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_silent_when_not_a_terminal(monkeypatch, capsys):
    monkeypatch.delenv("NKI_MLIR_PROGRESS", raising=False)
    assert not progress.enabled()          # pytest's stderr is captured, not a terminal
    assert progress.bar(3, "x") is progress.SILENT


def test_large_compile_shows_stages(monkeypatch, capsys):
    monkeypatch.setenv("NKI_MLIR_PROGRESS", "1")
    monkeypatch.setattr(compiler, "PROGRESS_MIN_OPS", 10)
    x = np.ones((128 * 4, 8), np.float32)
    nki.compile(many_tiles, x, use_cache=False)
    err = capsys.readouterr().err
    assert "compiling many_tiles" in err and "/5 [" in err and "nisa-schedule" in err
    monkeypatch.setenv("NKI_MLIR_PROGRESS", "0")
    nki.compile(many_tiles, x[:256], use_cache=False)
    assert "compiling" not in capsys.readouterr().err
