"""One trace for every program instance of an LNC launch (frontend/spmd.py symbolic ids,
frontend/symbolic_str.py, the ``program_id`` op), and the fall-back to one trace per
instance when the kernel needs its id as a Python value.  Each kernel's outputs are
compared with NumPy and with ``NKI_MLIR_SHARED_LAUNCH=0`` (one trace per instance)."""
import numpy as np
import pytest

import nki_mlir as nki
import shared_launch_kernels as K
from nki_mlir.errors import NKIError
from nki_mlir.frontend.symbolic_str import nki_fstr

RNG = np.random.default_rng(7)


def _x(cols=64):
    return RNG.standard_normal((256, cols)).astype(np.float32)


def _run(kernel, x, monkeypatch, shared: bool):
    monkeypatch.setenv("NKI_MLIR_SHARED_LAUNCH", "1" if shared else "0")
    return kernel[2].run((x,), {})


@pytest.mark.parametrize("name, want", [
    ("named_halves", lambda x: x * 3 + 1),
    ("swap_halves", lambda x: np.concatenate([x[128:], x[:128]])),
])
def test_index_arithmetic_of_the_id_is_traced_once(name, want, monkeypatch):
    kernel, x = getattr(K, name), _x()
    out, compiled = _run(kernel, x, monkeypatch, shared=True)
    assert all(c is compiled[0] for c in compiled)
    spmd = compiled[0].manifest["spmd"]
    assert spmd["symbolic_ids"] and not spmd["uses_program_id"] and spmd["ids"] is None
    assert "nki.program_id(axis=0)" in compiled[0].own_ir("nki")
    np.testing.assert_allclose(out, want(x), rtol=1e-6)
    out0, compiled0 = _run(kernel, x, monkeypatch, shared=False)
    assert compiled0[0] is not compiled0[1]
    np.testing.assert_array_equal(out, out0)


def test_symbolic_names_are_rendered_from_their_source(monkeypatch):
    _, compiled = _run(K.named_halves, _x(), monkeypatch, shared=True)
    text = compiled[0].own_ir("nki")
    assert 'name="core{pid}_in"' in text or "core{pid}_in" in text


def test_an_index_expression_is_computed_once_per_block(monkeypatch):
    """``pid * 128`` offsets both ``x`` and ``out`` and ``j * 32`` both column views of the
    loop body: each is one ``arith.muli`` (IRBuilder.materialize shares it in its block)."""
    _, compiled = _run(K.named_halves, _x(), monkeypatch, shared=True)
    text = compiled[0].own_ir("nki")
    assert text.count("arith.muli %program_id, %c128") == 1
    assert text.count("arith.muli %j, %c32") == 1
    assert text.count("memref.subview") == 4


@pytest.mark.parametrize("name, want", [
    ("branch_on_id", lambda x: np.concatenate([x[:128] * 2, -x[128:]])),
    ("name_as_key", lambda x: np.concatenate([x[:128] + 10, x[128:] + 20])),
])
def test_a_python_value_of_the_id_traces_each_instance(name, want, monkeypatch):
    x = _x()
    out, compiled = _run(getattr(K, name), x, monkeypatch, shared=True)
    assert compiled[0] is not compiled[1]
    assert [c.manifest["spmd"]["ids"] for c in compiled] == [[0], [1]]
    assert all(c.manifest["spmd"]["uses_program_id"] for c in compiled)
    assert "nki.program_id" not in compiled[0].own_ir("nki")
    np.testing.assert_allclose(out, want(x), rtol=1e-6)


def test_bad_option_is_an_error(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_SHARED_LAUNCH", "yes")
    with pytest.raises(NKIError, match="NKI_MLIR_SHARED_LAUNCH='yes'"):
        K.named_halves[2](_x())


class _Fmt:
    def __format__(self, spec):
        return f"<{spec}>"

    def __repr__(self):
        return "R"


@pytest.mark.parametrize("value, conv, spec", [
    (3, -1, None), (3, -1, ">5"), (2.5, -1, ".3f"), ("s", 114, None), ("é", 97, None),
    (_Fmt(), -1, "x"), (_Fmt(), 114, ">3"), (None, 115, None), ([1, 2], -1, ""),
])
def test_fstr_is_pythons_f_string_for_plain_values(value, conv, spec):
    conv_text = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[conv]
    want = eval('f"a{value' + conv_text + (":" + spec if spec is not None else "") + '}b"')
    assert nki_fstr("a", (value, conv, spec, "value"), "b") == want


def test_per_instance_is_remembered_and_reported(monkeypatch):
    """NKI_MLIR_LOOPS=roll forces loops, not the launch; a launch traced per instance says
    why (last_loop_report / NKI_MLIR_EXPLAIN_LOOPS), and the kernel's next launch (another
    shape) starts per instance instead of trying a symbolic trace first."""
    from nki_mlir.frontend import trace_build
    from nki_mlir.frontend.context import LAUNCH_KEY
    from trace_counting import count_traces
    monkeypatch.setenv("NKI_MLIR_LOOPS", "roll")
    x = _x(32)
    out, _ = _run(K.branch_on_id, x, monkeypatch, shared=True)
    np.testing.assert_allclose(out, np.concatenate([x[:128] * 2, -x[128:]]), rtol=1e-6)
    monkeypatch.setenv("NKI_MLIR_LOOPS", "auto")
    runs = count_traces(monkeypatch)
    out, _ = _run(K.branch_on_id, _x(48), monkeypatch, shared=True)
    assert len(runs) == 2       # one per instance: no symbolic attempt first
    what, why = trace_build.last_loop_report()[LAUNCH_KEY]
    assert what == "traced per instance" and "nl.program_id is compared" in why, why
    assert "shared_launch_kernels.py" in why


def test_a_failure_of_a_symbolic_trace_is_retried_per_instance(monkeypatch):
    """str.join rejects a symbolic name (no dunder asks for its text): the launch is traced
    per instance and the kernel means what its Python says."""
    from nki_mlir.frontend import trace_build
    from nki_mlir.frontend.context import LAUNCH_KEY
    x = _x()
    out, compiled = _run(K.joined_name, x, monkeypatch, shared=True)
    assert compiled[0] is not compiled[1]
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)
    assert "name=tile_core1" in compiled[1].own_ir("nki")
    assert "TypeError" in trace_build.last_loop_report()[LAUNCH_KEY][1]


def test_a_genuine_error_is_reported_as_per_instance(monkeypatch):
    x = _x()
    with pytest.raises(NKIError) as shared:
        _run(K.bad_slice, x, monkeypatch, shared=True)
    with pytest.raises(NKIError) as alone:
        _run(K.bad_slice, x, monkeypatch, shared=False)
    assert str(shared.value) == str(alone.value)
    assert shared.value.loc.line == alone.value.loc.line


def test_program_ids_of_a_run_outside_the_launch(monkeypatch):
    """CompiledKernel.run of a shared program takes the instance's ids; bad ids are a
    type error, none a located runtime error saying how to give them."""
    from nki_mlir.errors import NKIRuntimeError, NKITypeError
    x = _x()
    _, compiled = _run(K.named_halves, x, monkeypatch, shared=True)
    out = compiled[0].run((x,), {}, program_ids=(1,))[0]
    np.testing.assert_allclose(out[128:], x[128:] * 3 + 1, rtol=1e-6)
    with pytest.raises(NKITypeError, match="program_ids must be a tuple"):
        compiled[0].run((x,), {}, program_ids=1)
    with pytest.raises(NKIRuntimeError, match="program_ids="):
        compiled[0].run((x,), {})


def test_program_ids_reach_the_float32_storage_program(monkeypatch):
    """With NKI_PRECISE_FP=0 a run executes the program's float32-storage variant, which
    reads the same program ids (it failed asking for program_ids= as if none were given)."""
    x = _x()
    _, compiled = _run(K.named_halves, x, monkeypatch, shared=True)
    for mode in ("1", "0"):
        monkeypatch.setenv("NKI_PRECISE_FP", mode)
        out = compiled[0].run((x,), {}, program_ids=(1,))[0]
        np.testing.assert_allclose(out[128:], x[128:] * 3 + 1, rtol=1e-6)
