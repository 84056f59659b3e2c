"""Tests of nisa-schedule (passes/schedule.py): queues, list reordering, waits, in-order mode.

The reorder's correctness check: the example kernels compiled with ``schedule="list"`` and
``schedule="in-order"`` give the same outputs on the interpreter (program order and engine
queues with hazard checks), and every conflicting pair of instructions on different queues
of a straight-line program is ordered by the waits (an independent happens-before oracle).
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from nki_mlir.dialects import make_context
from nki_mlir.dialects.nisa import NisaInstruction
from nki_mlir.passes.schedule import NisaSchedule

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import kernels as EX  # noqa: E402

HBM = "#nisa.mem<shared_hbm>"
SB = "#nisa.mem<sbuf>"


def scheduled(text: str, mode: str = "list") -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    NisaSchedule(mode=mode).apply(make_context(), module)
    module.verify()
    return module


def instrs(module: ModuleOp) -> list[NisaInstruction]:
    return [op for op in module.walk() if isinstance(op, NisaInstruction)]


def info(op) -> tuple:
    a = op.attributes
    carried = a.get("nkim.deps_carried")
    return (op.name.split(".")[1], a["nkim.id"].value.data, a["nkim.queue"].data,
            [d.value.data for d in a["nkim.deps"].data],
            [[x.value.data for x in t.data] for t in carried.data] if carried else [])


BODY = f"""func.func @f(%x: memref<512x64xf32, {HBM}>, %y: memref<512x64xf32, {HBM}>, %out: memref<512x64xf32, {HBM}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {{
    %r = arith.muli %i, %c128 : index
    %a = nisa.alloc copy(%i) {{nkim.copies = 2 : i64, nkim.copy_stride = 256 : i64}} : memref<128x64xf32, {SB}>
    %xv = memref.subview %x[%r, 0] [128, 64] [1, 1] : memref<512x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}>
    nisa.dma_copy(dst=memref<128x64xf32, {SB}> %a, src=memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}> %xv) engine=dma
    nisa.activation(dst=memref<128x64xf32, {SB}> %a, src=memref<128x64xf32, {SB}> %a, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar
    %b = nisa.alloc copy(%i) {{nkim.copies = 2 : i64, nkim.copy_stride = 256 : i64}} : memref<128x64xf32, {SB}>
    %yv = memref.subview %y[%r, 0] [128, 64] [1, 1] : memref<512x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}>
    nisa.dma_copy(dst=memref<128x64xf32, {SB}> %b, src=memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}> %yv) engine=dma
    nisa.tensor_tensor_arith(dst=memref<128x64xf32, {SB}> %b, lhs=memref<128x64xf32, {SB}> %a, rhs=memref<128x64xf32, {SB}> %b, op=add) engine=vector
    %ov = memref.subview %out[%r, 0] [128, 64] [1, 1] : memref<512x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}>
    nisa.dma_copy(dst=memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}> %ov, src=memref<128x64xf32, {SB}> %b) engine=dma
  }} {{nki.range = "affine"}}
  func.return
}}"""


def test_list_mode_starts_both_loads_first_on_two_dma_queues():
    got = [info(op) for op in instrs(scheduled(BODY))]
    assert [(n, q) for n, _, q, _, _ in got] == [
        ("dma_copy", "dma0"), ("dma_copy", "dma1"), ("activation", "scalar"),
        ("tensor_tensor_arith", "vector"), ("dma_copy", "dma2")]
    assert [i for _, i, _, _, _ in got] == [0, 1, 2, 3, 4]
    # a and b rotate over 2 copies: the loads wait for the readers of 2 iterations back
    assert got[0][3:] == ([], [[3, 0, 2]])          # a: the exp (2) is implied by the add (3)
    assert got[1][3:] == ([], [[4, 0, 2]])          # b: the add (3) is implied by the store (4)
    assert got[2][3] == [0] and got[3][3] == [1, 2] and got[4][3] == [3]


def test_in_order_mode_keeps_the_order_and_serialises():
    module = scheduled(BODY, "in-order")
    assert module.attributes["nkim.schedule"].data == "in-order"
    got = [info(op) for op in instrs(module)]
    assert [n for n, *_ in got] == ["dma_copy", "activation", "dma_copy", "tensor_tensor_arith", "dma_copy"]
    # every instruction waits for the one before it (the first one: the previous iteration's last)
    for k, (_, i, q, deps, _) in enumerate(got):
        prev = got[k - 1]
        assert prev[1] in deps or prev[2] == q, (k, got)


def test_fence_on_collectives():
    module = scheduled(f"""func.func @f(%t: memref<128x64xf32, {SB}>, %r: memref<128x64xf32, {SB}>, %out: memref<128x64xf32, {HBM}>) {{
      nisa.sendrecv(src=memref<128x64xf32, {SB}> %t, dst=memref<128x64xf32, {SB}> %r, send_to_rank=1, recv_from_rank=1, pipe_id=0) engine=dma
      nisa.dma_copy(dst=memref<128x64xf32, {HBM}> %out, src=memref<128x64xf32, {SB}> %r) engine=dma
      func.return }}""")
    send, store = instrs(module)
    assert "nkim.fence" in send.attributes and "nkim.fence" not in store.attributes
    assert info(store)[3] == []                      # the fence orders it


@pytest.mark.parametrize("name", ["tiled_matmul", "row_softmax", "layernorm", "attention"])
def test_reordered_kernels_compute_the_same_outputs(name):
    rng = np.random.default_rng(5)
    if name == "tiled_matmul":
        args = (rng.standard_normal((256, 256)).astype(ml_dtypes.bfloat16),
                rng.standard_normal((256, 512)).astype(ml_dtypes.bfloat16))
    elif name == "row_softmax":
        args = (rng.standard_normal((256, 512)).astype(np.float32),)
    elif name == "layernorm":
        args = (rng.standard_normal((256, 512)).astype(np.float32),
                rng.standard_normal((1, 512)).astype(np.float32),
                rng.standard_normal((1, 512)).astype(np.float32))
    else:
        args = tuple(rng.standard_normal((256, 128)).astype(np.float32) for _ in range(3))
    kern = getattr(EX, name)
    outs = {}
    for mode in ("in-order", "list"):
        ck = kern.compile_with(args, {}, schedule=mode, use_cache=False)
        assert f'nkim.schedule = "{mode}"' in ck.ir("nisa")
        outs[mode, "program"] = ck.run(args, {}, mode="program-order", hazards=False)
        outs[mode, "queues"] = ck.run(args, {}, mode="queues", hazards=True)
    ref = outs["in-order", "program"]
    for key, got in outs.items():
        for r, g in zip(ref, got):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(r), err_msg=str(key))


def test_list_mode_reorders_a_real_kernel():
    a = np.ones((256, 512), np.float32)
    ir = {m: EX.row_softmax.compile_with((a,), {}, schedule=m, use_cache=False).ir("nisa")
          for m in ("in-order", "list")}
    order = {m: [ln.split("(")[0].strip() for ln in ir[m].splitlines() if "nkim.id" in ln] for m in ir}
    assert sorted(order["list"]) == sorted(order["in-order"])
    assert any(q in ir["list"] for q in ('"dma0"', '"dma1"')) and '"dma2"' in ir["list"]
