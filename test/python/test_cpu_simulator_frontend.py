"""``nki_cpu_simulator``'s ``nki.compiler.frontend.ParserFrontend().compile(...)``: the entry
nki-library's trace-only tests call (``test/utils/kernel_tracer.py``) traces and compiles
the kernel with nki-mlir, so a kernel's own error surfaces (located), a valid kernel gives
its ``nki`` IR, and the rest of the Neuron compiler API stays NotImplementedError."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_cpu_simulator.nki.compiler.frontend import ParserFrontend
from nki_cpu_simulator.nki.compiler.ncc_driver import CompileOptions
from nki_mlir.errors import NKIError


@nki.jit
def asserts_false(dummy_out):
    assert False, "this kernel always fails"


@nki.jit
def copy_rows(x, rows):
    out = nl.ndarray((rows, x.shape[1]), x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((rows, x.shape[1]), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:rows, :])
    nisa.dma_copy(dst=out, src=t)
    return out


X = np.ones((128, 64), np.float32)


def test_a_kernel_error_surfaces():
    with pytest.raises(NKIError, match="this kernel always fails") as info:
        ParserFrontend().compile(asserts_false, inputs={"dummy_out": np.zeros((1,), np.float32)},
                                 target="trn2", lnc=1, artifacts_dir=None, dump_python_ast=False,
                                 output_names=["dummy_out"])
    assert info.value.loc is not None and info.value.loc.file.endswith(__file__.split("/")[-1])


@pytest.mark.parametrize("target,lnc", [("trn2", 1), ("trn2", 2), ("trn3_a0", 1), ("trn1", 1)])
def test_compiles_and_prints_the_module(tmp_path, target, lnc):
    res = ParserFrontend().compile(copy_rows, inputs={"x": X, "rows": 64}, target=target, lnc=lnc,
                                   artifacts_dir=str(tmp_path), output_names=["out"])
    assert len(res.compiled) == lnc
    assert res.compiled[0].target == {"trn3_a0": "trn3"}.get(target, target)
    path = tmp_path / "module.mlir"
    with open(path, "w") as f:
        res.module.operation.print(file=f, enable_debug_info=True, use_local_scope=True)
    text = path.read_text()
    assert "copy_rows" in text and "memref<64x64xf32" in text
    assert list(tmp_path.rglob("manifest.json"))


def test_the_rest_of_the_neuron_compiler_is_not_provided():
    with pytest.raises(NotImplementedError, match="neuronxcc"):
        CompileOptions(target="trn2").disable_backend_optimizations()
    with pytest.raises(NotImplementedError):
        ParserFrontend().lower_to_neff
