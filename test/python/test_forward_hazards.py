"""DMA forwarding in hazard-checked queue mode (nki_mlir/runtime/forward.py, ``queued``): the
forwarded DMAs copy nothing, the results are those of program order bit for bit, and the
checks report exactly what they report without forwarding -- the same error (or none) for
every seeded fault of test_seeded_faults (each removable wait, each buffer moved onto a live
one) of kernels whose DMAs forward."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr

import nki_mlir as nki
from nki_mlir.compiler import parse_module
from nki_mlir.errors import NKIError
from nki_mlir.runtime import hazards
from nki_mlir.runtime.interpreter import decode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples"))
sys.path.insert(0, str(HERE))

import kernels as ex  # noqa: E402  (examples/kernels.py)
import test_seeded_faults as sf  # noqa: E402

#: kernels whose input tiles forward (small shapes: several tiles where there is a loop)
KERNELS = [k for k in sf.KERNELS if k[0] in ("layernorm", "attention", "row_softmax",
                                             "tensor_add", "matmul_bias")]


def _outcome(program, args) -> tuple:
    """``("ok", bytes of each output)`` or ``("error", message)`` of a hazard-checked run."""
    try:
        outs = program.run([a.copy() for a in args], hazards=True)
    except NKIError as exc:
        return "error", str(exc)
    return "ok", tuple((o.dtype.str, o.shape, o.tobytes()) for o in outs)


def _unforwarded(program, args, monkeypatch) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(hazards.Checker, "forward", lambda self, plan, inst, env: None)
        return _outcome(program, args)


def _compiled(kernel, make):
    args = make(np.random.default_rng(7))
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    ck = nki.compile(kernel, *args, use_cache=False)
    return ck, arrays


def test_forwarded_dmas_copy_nothing_and_give_program_order_bits(monkeypatch):
    forwarded = []
    orig = hazards.Checker.forward

    def spy(self, plan, inst, env):
        orig(self, plan, inst, env)
        forwarded.append(inst.fn is hazards._copies_nothing)
    monkeypatch.setattr(hazards.Checker, "forward", spy)
    rng = np.random.default_rng(1)
    x = (3 * rng.standard_normal((256, 512)) + 1).astype(np.float32)
    gamma, beta = (rng.standard_normal((1, 512)).astype(np.float32) for _ in range(2))
    prog = nki.compile(ex.layernorm, x, gamma, beta, use_cache=False).program
    ref = prog.run([x, gamma, beta])
    for layout in ("contiguous", "wide rows", "transposed"):
        xi = x
        if layout == "wide rows":
            xi = np.concatenate([x, x], axis=1)[:, :512]
        elif layout == "transposed":      # free stride != 4: copied, not forwarded
            xi = np.asfortranarray(x)
        forwarded.clear()
        x0 = xi.copy()
        got = prog.run_checked([xi, gamma, beta], mode="queues", hazards=True)
        # the two x tiles, and gamma / beta (broadcast over the partitions, read only by
        # tensor_tensor: forward.broadcast_readers) whatever the layout of x
        assert forwarded.count(True) == (2 if layout == "transposed" else 4), layout
        np.testing.assert_array_equal(got[0].view(np.uint32), ref[0].view(np.uint32))
        np.testing.assert_array_equal(xi, x0)


@pytest.mark.parametrize("name,kernel,make", KERNELS, ids=[k[0] for k in KERNELS])
def test_seeded_faults_are_reported_alike_with_forwarding(name, kernel, make, monkeypatch):
    ck, args = _compiled(kernel, make)
    text = ck.ir("nisa")
    modules = []
    for k in range(sf.edge_count(parse_module(text))):      # each wait removed in turn
        m = parse_module(text)
        op, attr, i = sf.edge_entries(m)[k]
        items = list(op.attributes[attr].data)
        items.pop(i)
        if items or attr == "nkim.deps":
            op.attributes[attr] = ArrayAttr(items)
        else:
            del op.attributes[attr]
        modules.append(m)
    rng = random.Random(11)
    for _ in range(4):
        f = sf.seed_shift(name, text, ck.target, rng)
        if f is not None:
            modules.append(f.module)
    fwd = [hazards.Checker.forward]
    with_plans = errors = 0
    for m in [parse_module(text)] + modules:
        prog = decode(m)
        with_plans += any(i.forward is not None for i in prog.schedule.infos)
        got = _outcome(prog, args)
        assert got == _unforwarded(prog, args, monkeypatch)
        assert hazards.Checker.forward is fwd[0]
        errors += got[0] == "error"
    assert with_plans, f"{name}: no DMA forwards"
    assert errors, f"{name}: no seeded fault reported"
