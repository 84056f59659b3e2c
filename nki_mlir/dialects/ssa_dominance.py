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
    """The first op (in program order) with an operand defined after it, and that operand's
    index; ``None`` when every use in single-block regions under ``root`` is dominated."""
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
            if operand not in defined and operand not in outer and _defined_in_block(operand, block):
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


__all__ = ["first_violation"]
