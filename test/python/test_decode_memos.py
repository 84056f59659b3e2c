"""The decode-time shortcuts give the answers of the analyses they stand for:
:func:`~nki_mlir.dialects.effects.written` (the write accesses' values, read through the
write roles only) and :func:`~nki_mlir.runtime.blocks.blocks_of` memoised per alloc and plan
while a function decodes."""
import os
import sys

import pytest
from xdsl.irdl import IRDLOperation

import nki_mlir as nki
from nki_mlir.dialects import nisa as nisa_d
from nki_mlir.dialects.effects import accesses, written
from nki_mlir.runtime import blocks

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from run_examples import main_cases  # noqa: E402

_CASES = {name.split()[0]: (kernel, args) for name, kernel, args, _, _ in main_cases()}


def _module(name):
    kernel, args = _CASES[name]
    return nki.compile(kernel, *args, use_cache=False)._nisa_module()


@pytest.mark.parametrize("name", ["attention", "layernorm", "row_softmax"])
def test_written_is_the_write_accesses(name):
    ops = [op for op in _module(name).walk()
           if op.name.startswith("nisa.") and isinstance(op, IRDLOperation)]
    n_writes = 0
    for op in ops:
        want = [a.value for a in accesses(op) if a.is_write]
        got = written(op)
        assert len(got) == len(want) and all(g is w for g, w in zip(got, want)), op.name
        n_writes += len(got)
    assert n_writes > 0


@pytest.mark.parametrize("name", ["attention", "layernorm"])
def test_blocks_of_memoised_gives_the_plain_answer(name):
    fop = next(op for op in _module(name).walk() if op.name == "func.func")
    allocs = [op for op in fop.walk() if isinstance(op, nisa_d.AllocOp)]
    plan = blocks.plan(fop)
    plain = [blocks.blocks_of(a, plan) for a in allocs]
    assert any(p is not None for p in plain)
    other = {}      # another plan: answered on its own, not from the first plan's memo
    with blocks.memoized():
        first = [blocks.blocks_of(a, plan) for a in allocs]
        again = [blocks.blocks_of(a, plan) for a in allocs]
        assert [blocks.blocks_of(a, other) for a in allocs] == [None] * len(allocs)
    assert first == plain
    assert all(x is y for x, y in zip(first, again))
