"""``Operation.__init__`` without property setters (dialects/fast_op_init.py) builds the op
upstream's ``__init__`` builds.

Every op of a compiled kernel (frontend and final module: views, ISA ops, loops with
regions and block arguments, constants) is rebuilt from its operands, result types,
properties, attributes, location and successors by both initialisers; the two ops must hold
the same operands, uses (linked at the head of each value's use list, in operand order),
results, properties and attributes (in order), location, successors and regions, and
``__post_init__``'s defaults.
"""
from __future__ import annotations

from xdsl.dialects import cf
from xdsl.dialects.builtin import UNKNOWN_LOC, DenseArrayBase, IndexType, i1, i32
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation
from xdsl.irdl.operations import OptionalDef

from nki_mlir.dialects import fast_op_init

from test_compile_speed import frontend_and_final_modules, access_patterns, two_ops, views


def _upstream_post(op) -> None:
    """xDSL 0.74's ``IRDLOperation.__post_init__``."""
    defn = op.get_irdl_definition()
    for table, defs in ((op.properties, defn.properties), (op.attributes, defn.attributes)):
        for name, d in defs.items():
            if name not in table and not isinstance(d, OptionalDef) and d.default_value is not None:
                table[name] = d.default_value
    Operation.__post_init__(op)


_UPSTREAM_POST = _upstream_post


def _state(op: Operation) -> tuple:
    return (type(op), tuple(op.operands), [u.index for u in op._operand_uses],
            [u.operation is op for u in op._operand_uses],
            [(r.type, r.index, r.op is op, r.first_use, r.name_hint) for r in op.results],
            list(op.properties.items()), list(op.attributes.items()), op.location,
            tuple(op.successors), [u.index for u in op._successor_uses],
            len(op.regions), [r.parent is op for r in op.regions], op.parent)


def _build(init, op: Operation, regions=()) -> Operation:
    new = type(op).__new__(type(op))
    init(new, operands=list(op.operands), result_types=[r.type for r in op.results],
         properties=op.properties, attributes=op.attributes, location=op.location,
         successors=list(op.successors), regions=regions)
    return new


def _modules():
    return frontend_and_final_modules(((views, (512, 8)), (two_ops, (128, 8)), (access_patterns, (4, 128, 64))))


def test_installed():
    assert Operation.__init__ is fast_op_init.operation_init


def test_every_op_built_alike():
    names = set()
    for module in _modules():
        for op in list(module.walk()):
            names.add(op.name)
            a, b = _build(fast_op_init.operation_init, op), _build(fast_op_init._upstream, op)
            assert _state(a) == _state(b), op.name
            for v in set(op.operands):   # the newest users of each value: b's uses, then a's
                users = [u.operation for u in v.uses][:2 * list(op.operands).count(v)]
                n = len(users) // 2
                assert users[:n] == [b] * n and users[n:] == [a] * n, op.name
            for new in (a, b):
                new.drop_all_references()
    assert {"memref.subview", "memref.reinterpret_cast", "scf.for", "arith.constant"} <= names


def test_use_lists_match_upstream():
    """The same use list, in order, after ops with repeated operands are built each way."""
    lists = []
    for init in (fast_op_init.operation_init, fast_op_init._upstream):
        block = Block(arg_types=[IndexType(), IndexType()])
        x, y = block.args
        ops = []
        for operands in ([x, y, x], [y], [], [x, x]):
            op = Operation.__new__(cf.AssertOp)
            init(op, operands=operands)
            ops.append(op)
        lists.append([[(ops.index(u.operation), u.index) for u in v.uses] for v in (x, y)])
        assert all(op.location is UNKNOWN_LOC for op in ops)
    assert lists[0] == lists[1]


def test_successors_and_regions():
    states = []
    for init in (fast_op_init.operation_init, fast_op_init._upstream):
        dest, other = Block(), Block()
        cond = Block(arg_types=[i1]).args[0]
        br = Operation.__new__(cf.ConditionalBranchOp)
        init(br, operands=[cond], successors=[dest, other],
             properties={"operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 0, 0])})
        assert [u.operation for u in dest.uses] == [br]
        region = Region(Block())
        holder = _build(init, br, regions=[region])
        states.append(([a is b for a, b in zip(br.successors, (dest, other))], _state(br)[9],
                       len(holder.regions), region.parent is holder))
        for op in (br, holder):
            op.drop_all_references()
    assert states[0] == states[1]


def _op_classes():
    seen, todo = [], [IRDLOperation]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            try:
                defined = sub.get_irdl_definition() is not None
            except Exception:   # noqa: BLE001 -- an abstract base, no definition
                defined = False
            if defined:
                seen.append(sub)
    return seen


def test_post_init_fills_upstream_defaults():
    """Every loaded IRDL op class, with no / some properties and attributes given: the same
    defaults filled in, in the same order (and given values kept)."""
    with_defaults = 0
    for cls in _op_classes():
        defn = cls.get_irdl_definition()
        given = [({}, {}), (dict(list(_some(defn.properties))), dict(list(_some(defn.attributes))))]
        for props, attrs in given:
            states = []
            for post in (fast_op_init.irdl_post_init, _UPSTREAM_POST):
                op = cls.__new__(cls)
                op.properties, op.attributes = dict(props), dict(attrs)
                post(op)
                states.append((list(op.properties.items()), list(op.attributes.items())))
            assert states[0] == states[1], cls.name
            with_defaults += bool(states[0][0] or states[0][1]) and not props and not attrs
    assert with_defaults >= 5


def _some(defs):
    """Every other definition that has a default, given a marker value (an unused default)."""
    marker = StringAttr("given")
    return [(name, marker) for i, (name, d) in enumerate(defs.items())
            if getattr(d, "default_value", None) is not None and i % 2 == 0]


def test_post_init_installed():
    assert IRDLOperation.__post_init__ is fast_op_init.irdl_post_init
