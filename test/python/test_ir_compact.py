"""The compact form of the final nisa module (runtime/ir_compact.py) and its use on cache hits."""
import json
import os
import sys
import warnings

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.compiler import parse_module, print_module
from nki_mlir.runtime import artifact, ir_compact

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


@nki.jit
def scale_rows(x, s):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(i * 128, 128), :])
        e = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t, scale=s)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=e)
    return out


def _main_job():
    from run_examples import main_cases
    return main_cases()


@pytest.mark.parametrize("case", range(5))
def test_round_trip_prints_the_same_module(case):
    name, kernel, args, ref, tol = _main_job()[case]
    ck = nki.compile(kernel, *args, use_cache=False)
    text = ck.ir("nisa")
    data = ir_compact.encode(parse_module(text), text)
    assert data is not None
    doc = json.loads(data)
    assert doc["format"] == ir_compact.FORMAT and doc["version"] == ir_compact.VERSION
    module = ir_compact.decode(data, text)
    module.verify()
    assert print_module(module) == text


def test_compact_form_is_bound_to_its_text_and_version():
    x = np.ones((128, 64), np.float32)
    ck = nki.compile(scale_rows, x, 0.5, use_cache=False)
    text = ck.ir("nisa")
    data = ck._ir["compact"]
    with pytest.raises(ir_compact.CompactError, match="not made from this module's text"):
        ir_compact.decode(data, text + " ")
    doc = json.loads(data)
    doc["version"] = 99
    with pytest.raises(ir_compact.CompactError, match="version 99"):
        ir_compact.decode(json.dumps(doc), text)
    doc["version"] = ir_compact.VERSION
    doc["attrs"][0][1] = "os.system|system"      # names are looked up in a closed table
    with pytest.raises(ir_compact.CompactError, match="unknown attribute"):
        ir_compact.decode(json.dumps(doc), text)
    with pytest.raises(ir_compact.CompactError, match="unreadable"):
        ir_compact.decode("{not json", text)


def test_disk_hit_decodes_the_compact_form(tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    from nki_mlir.driver import compile as compiler  # where compile_kernel looks names up
    x = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32)
    ck = nki.compile(scale_rows, x, 0.5)
    want = ck(x, 0.5)
    np.testing.assert_allclose(want, np.exp(x * 0.5), rtol=1e-6)
    m = json.loads((ck.artifact / "manifest.json").read_text())
    assert m["files"]["compact"] == "kernel.nisa.compact.json"
    assert m["sha256"]["kernel.nisa.compact.json"] == artifact._sha256(
        (ck.artifact / "kernel.nisa.compact.json").read_bytes())
    calls = []
    monkeypatch.setattr(compiler, "parse_module", lambda t: calls.append(t) or parse_module(t))
    hit = compiler._disk_hit(ck.artifact, ck.target)
    assert hit is not None and calls == []          # no text parsed
    np.testing.assert_array_equal(hit(x, 0.5), want)


def test_damaged_compact_form_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    from nki_mlir.driver import compile as compiler  # where compile_kernel looks names up
    x = np.ones((128, 64), np.float32)
    ck = nki.compile(scale_rows, x, 0.25)
    p = ck.artifact / "kernel.nisa.compact.json"
    p.write_text(p.read_text().replace('"op":', '"op" :', 1))     # checksum mismatch
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert compiler._disk_hit(ck.artifact, ck.target) is None
    assert any("damaged cache entry" in str(x.message) for x in w)


def test_artifact_without_compact_form_parses_the_text(tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    from nki_mlir.driver import compile as compiler  # where compile_kernel looks names up
    x = np.ones((128, 64), np.float32)
    ck = nki.compile(scale_rows, x, 2.0)
    manifest, ir = artifact.read_artifact(ck.artifact)
    ir.pop("compact")
    old = tmp_path / "old"
    artifact.write_artifact(old, {k: v for k, v in manifest.items()
                                  if k not in ("format", "format_version", "files", "sha256",
                                               "manifest_sha256")}, ir)
    assert not (old / "kernel.nisa.compact.json").exists()
    hit = compiler._disk_hit(old, ck.target)
    np.testing.assert_array_equal(hit(x, 2.0), ck(x, 2.0))


def test_op_with_results_and_regions_round_trips():
    # the encoder numbers an op's results before the values of its regions; a decoder
    # numbering them after (scf.if yielding a value) misreads every later reference
    text = print_module(parse_module('''builtin.module {
  func.func @f(%c : i1, %a : index, %b : index) -> index {
    %r = scf.if %c -> (index) {
      %s = arith.addi %a, %b : index
      scf.yield %s : index
    } else {
      scf.yield %a : index
    }
    %t = arith.addi %r, %b : index
    func.return %t : index
  }
}
'''))
    data = ir_compact.encode(parse_module(text), text)
    assert data is not None
    module = ir_compact.decode(data, text)
    module.verify()
    assert print_module(module) == text


def test_negative_references_are_malformed():
    x = np.ones((128, 64), np.float32)
    ck = nki.compile(scale_rows, x, 0.5, use_cache=False)
    text, doc = ck.ir("nisa"), json.loads(ck._ir["compact"])

    def ops(op):
        yield op
        for blocks in op[6]:
            for _args, body in blocks:
                for o in body:
                    yield from ops(o)
    user = next(o for o in ops(doc["op"]) if o[1])
    user[1][0] = -1                           # its first operand: a negative value number
    with pytest.raises(ir_compact.CompactError, match="out of range"):
        ir_compact.decode(json.dumps(doc), text)



_EQUAL_ATTRS = '''builtin.module {
  func.func @f(%a : memref<128x64xf32>, %b : memref<128x64xf32>) attributes {p = [1 : i64, [2 : i64, 3 : i64]], q = [1 : i64, [2 : i64, 3 : i64]], z = 0.000000e+00 : f32, nz = -0.000000e+00 : f32, z2 = 0.000000e+00 : f32} {
    func.return
  }
}
'''


def test_equal_attributes_share_one_entry():
    # the parser makes a new object for every occurrence: equal ones get one entry (floats
    # stay apart by their bits), and the decoded module shares that one object
    text = print_module(parse_module(_EQUAL_ATTRS))
    data = ir_compact.encode(parse_module(text), text)
    kinds = [e[1].split("|")[1] for e in json.loads(data)["attrs"]]
    # [128, 64], [2, 3], [1, [2, 3]] (p and q), the function's inputs and results: once each
    assert kinds.count("ArrayAttr") == 5
    assert kinds.count("MemRefType") == 1
    assert kinds.count("FloatAttr") == 2           # 0.0 (twice) and -0.0
    decoded = ir_compact.decode(data, text)
    assert print_module(decoded) == text
    attrs = decoded.body.block.first_op.attributes
    assert attrs["p"] is attrs["q"] and attrs["z"] is attrs["z2"] and attrs["nz"] is not attrs["z"]


def test_encoder_numbers_values_by_object(monkeypatch):
    # an SSA value equals only itself: the encoder numbers values by object id, never
    # hashing them (SSAValue.__hash__ is a Python-level call per operand)
    from xdsl.ir import SSAValue
    x = np.ones((128, 64), np.float32)
    ck = nki.compile(scale_rows, x, 0.5, use_cache=False)
    text = ck.ir("nisa")
    module = parse_module(text)
    hashed = []

    def counting(self, _h=SSAValue.__hash__):
        hashed.append(1)
        return _h(self)
    monkeypatch.setattr(SSAValue, "__hash__", counting)
    data = ir_compact.encode(module, text)
    monkeypatch.undo()
    assert hashed == [] and data == ck._ir["compact"]
