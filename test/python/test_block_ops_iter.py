"""``iter(block.ops)`` (dialects/xdsl_speedups: a generator) hands out what xDSL 0.74's
``_BlockOpsIterator`` does: the ops by ``next_op``, the next one read when an op is handed
out -- so an op inserted right after the current one is not visited, and erasing the
current one does not stop the iteration."""
from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block
from xdsl.ir.core import _BlockOpsIterator

from nki_mlir.dialects import xdsl_speedups  # noqa: F401 -- installs the iterator


def _block(n: int) -> Block:
    return Block([arith.ConstantOp(IntegerAttr(i, IndexType())) for i in range(n)])


def _visit(iterator, block: Block, mutate) -> list[int]:
    seen = []
    for op in iterator:
        seen.append(op.value.value.data)
        mutate(block, op)
    return seen


def test_block_ops_iteration_as_upstream():
    def insert_after(block, op):
        if op.value.value.data == 1:
            block.insert_op_after(arith.ConstantOp(IntegerAttr(99, IndexType())), op)

    def erase(block, op):
        if op.value.value.data == 2:
            block.erase_op(op)

    assert type(iter(_block(1).ops)) is not _BlockOpsIterator      # (the override is in)
    for mutate in (lambda b, o: None, insert_after, erase):
        a, b = _block(5), _block(5)
        got = _visit(iter(a.ops), a, mutate)
        want = _visit(_BlockOpsIterator(b.first_op), b, mutate)
        assert got == want
        assert [o.value.value.data for o in a.ops] == [o.value.value.data for o in b.ops]
    assert list(Block().ops) == []
