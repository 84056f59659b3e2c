"""The planned IRDL op builder (dialects/fast_build.py) builds upstream's op.

Every IRDL op of two compiled kernels (frontend and final module) is rebuilt from its named
operands, result types, properties and attributes by both builders, with the optional /
variadic operands given as values, lists or ``None``; the ops must agree on operands,
result types, properties (segment sizes included, in order) and attributes.  Calls the
planned builder hands to upstream (an op as an operand, a missing single operand) give
upstream's op or upstream's error.
"""
from __future__ import annotations

import pytest
from xdsl.irdl import IRDLOperation
from xdsl.irdl.operations import OptionalDef, VariadicDef

from nki_mlir.dialects import fast_build

from test_compile_speed import frontend_and_final_modules, two_ops, views


def _upstream(cls, **kw):
    op = cls.__new__(cls)
    fast_build._upstream(op, cls.get_irdl_definition(), operands=kw.get("operands", []),
                         result_types=kw.get("result_types", []), properties=kw.get("properties", {}),
                         attributes=kw.get("attributes", {}), successors=[], regions=[])
    op.__post_init__()
    return op


def _same(a, b) -> None:
    assert tuple(a.operands) == tuple(b.operands)
    assert [r.type for r in a.results] == [r.type for r in b.results]
    assert list(a.properties.items()) == list(b.properties.items())
    assert list(a.attributes.items()) == list(b.attributes.items())
    for op in (a, b):           # not users of the module's values any more
        op.drop_all_references()


def _modules():
    return frontend_and_final_modules(((views, (512, 8)), (two_ops, (128, 8))))


def test_every_op_rebuilt_alike():
    forms = set()
    for module in _modules():
        for op in module.walk():
            if not isinstance(op, IRDLOperation) or op.regions or op.successors:
                continue
            defn = op.get_irdl_definition()
            seg = {"operandSegmentSizes", "resultSegmentSizes"}
            props = {k: v for k, v in op.properties.items() if k not in seg}
            args = []
            for name, d in defn.operands:
                v = getattr(op, name)
                if isinstance(d, OptionalDef):
                    forms.add("optional " + ("none" if v is None else "value"))
                    args.append(v if v is None or len(args) % 2 else [v])
                elif isinstance(d, VariadicDef):
                    forms.add("variadic")
                    args.append(list(v))
                else:
                    args.append(v)
            kw = dict(operands=args, result_types=[r.type for r in op.results],
                      properties=props, attributes=dict(op.attributes))
            _same(type(op).build(**kw), _upstream(type(op), **kw))
    assert {"optional none", "optional value", "variadic"} <= forms


def test_calls_left_to_upstream():
    module = next(_modules())
    dma = next(op for op in module.walk() if op.name == "nki.dma_copy")
    t = dma.dst.owner                                  # an op given as an operand
    kw = dict(operands=[t, dma.src], properties=dict(dma.properties))
    _same(type(dma).build(**kw), _upstream(type(dma), **kw))
    kw = dict(operands=[None, dma.src], properties=dict(dma.properties))
    with pytest.raises(ValueError) as fast:
        type(dma).build(**kw)
    with pytest.raises(ValueError) as slow:
        _upstream(type(dma), **kw)
    assert str(fast.value) == str(slow.value)
