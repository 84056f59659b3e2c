"""The registrar of instruction definitions: ``@instruction`` fills every layer's registry.

:func:`instruction` reads a definition class body (:func:`nki_mlir.dialects.ods.record_of`)
and registers the record with each layer, which keeps its own registry and never imports
this package:

==================  ===========================================================================
layer               what it gets
==================  ===========================================================================
``isa_names``       the name, so ``nki.isa.<name>`` exists (a ``Builtin`` with the record's doc)
dialects            the ``nki.<name>`` / ``nisa.<name>`` op twins, their verifier, memory
                    effects (trait) and 1:1 lowering (:func:`~nki_mlir.dialects.ods_ops.define_ops`)
frontend            the ``nisa.<name>`` handler (public signature) and the Beta 1 ``nisa1.<name>``
                    form (:func:`~nki_mlir.frontend.ods_calls.define_call`)
runtime             the interpreter's closure builder (``interpret``)
==================  ===========================================================================

The passes and the cost model need no registration: they read the record from the op
(``type(op).DEFINITION``: its default engine, its ``cost`` row) and its memory effects from
the op's trait.

Each registration refuses a name that is registered already, so an instruction has one
definition and no hand-written twin.
"""
from __future__ import annotations

from ..dialects.ods import InstructionDef, record_of
from ..dialects.ods_ops import define_ops
from ..frontend.ods_calls import define_call
from .. import isa_names
from ..runtime.handlers import register as register_builder

#: every registered definition by instruction name, in registration order
DEFINITIONS: dict[str, InstructionDef] = {}


def instruction(cls: type) -> InstructionDef:
    """Class decorator: read the definition ``cls`` and register it with every layer.

    Returns the :class:`~nki_mlir.dialects.ods.InstructionDef` (the module attribute named
    after the instruction is the record).

    Raises:
        TypeError / ValueError: internal errors in the definition (see
            :func:`~nki_mlir.dialects.ods.record_of`), or a name defined twice.
    """
    rec = record_of(cls)
    shared = rec.isa is not None and rec.isa.of is not None  # another definition's nisa op
    if (rec.interpret is None or rec.cost is None) != shared:
        raise TypeError(f"internal error: instruction definition {rec.name} needs 'interpret' "
                        f"and 'cost' (and has neither when its isa form is another's op)")
    if rec.name in DEFINITIONS:
        raise ValueError(f"internal error: nki.isa.{rec.name} is defined twice")
    if rec.public:  # an op of ours (``public = False``) has no nki.isa API
        isa_names.define(rec.name)
    nki_op, nisa_op = define_ops(rec)
    if rec.public:
        define_call(rec, nki_op)
    if not shared:
        register_builder(nisa_op.name, rec.interpret)
    DEFINITIONS[rec.name] = rec
    return rec


__all__ = ["instruction", "DEFINITIONS"]
