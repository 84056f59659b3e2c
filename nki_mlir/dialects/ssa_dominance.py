"""SSA dominance of single-block regions: every operand is defined before its use.

MLIR's verifier rejects an operand that does not dominate its use ("operand #N does not
dominate this use"); xDSL's parser accepts a forward reference inside a block and its
verifier does not check it, so ``nki-opt`` checks it on its input before any pass runs
(the passes assume it).  Within one block a value is visible after the op defining it;
a nested region sees what is visible at its op.  Regions of several blocks (CFG regions)
are not checked here: their dominance is between blocks.
"""
from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue


def first_violation(root: Operation) -> tuple[Operation, int] | None:
    """The first op (in program order) with an operand it does not see, and that operand's
    index; ``None`` when every use in single-block regions under ``root`` is dominated.
    :func:`defined_after` tells the two kinds apart: a value defined after its use in the
    same or an enclosing block, or one defined in a region that does not enclose the use."""
    visible: set[SSAValue] = set()
    for region in root.regions:
        if len(region.blocks) == 1:
            found = _block(region.blocks[0], visible)
            if found is not None:
                return found
    return None


def _block(block: Block, outer: set[SSAValue]) -> tuple[Operation, int] | None:
    defined = set(block.args)
    for op in block.ops:
        for i, operand in enumerate(op.operands):
            if operand not in defined and operand not in outer:
                return op, i
        if op.regions:
            inner = outer | defined
            for region in op.regions:
                if len(region.blocks) == 1:
                    found = _block(region.blocks[0], inner)
                    if found is not None:
                        return found
        defined.update(op.results)
    return None


def defined_after(value: SSAValue, use: Operation) -> bool:
    """``value`` is defined in the block of ``use`` or in a block enclosing it (so a ``use``
    that does not see it comes before the definition)."""
    block = use.parent_block()
    return block is not None and _defined_in_block(value, block)


def _defined_in_block(value: SSAValue, block: Block) -> bool:
    """``value`` is a result of an op of ``block`` or of a block enclosing it (so a use of it
    in ``block`` that does not see it is a use before the definition)."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return False  # a block argument of a block that does not enclose the use
    home = owner.parent_block()
    b: Block | None = block
    while b is not None:
        if b is home:
            return True
        parent = b.parent_op()
        b = parent.parent_block() if parent is not None else None
    return False


__all__ = ["defined_after", "first_violation"]
