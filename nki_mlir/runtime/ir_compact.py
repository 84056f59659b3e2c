"""A compact, versioned, non-executable form of a final ``nisa`` module, for fast cache hits.

Parsing the printed module again costs tens of milliseconds; rebuilding the same ops from
this form costs about a millisecond.  The form is JSON (never pickle: nothing in it is
executed or imported) and is stored in the artifact next to ``kernel.nisa.mlir``, covered
by the manifest's checksums like every other file; it also records the SHA-256 of the
text it was made with, so it is only used together with exactly that text.

Layout (``FORMAT`` / ``VERSION``)::

    {"format": "nki-mlir-compact-ir", "version": 1, "text_sha256": "<hex>" | null,
     "attrs": [entry, ...],      # every distinct attribute once; entries refer to earlier ones
     "op": op}                   # the builtin.module

    entry:  ["p", class, [attr, ...]]    a parametrized attribute (its parameters)
            ["d", class, kind, payload]  a data attribute: kind "i" int, "b" bool,
                                         "f" float (float.hex), "s" str, "y" bytes (hex),
                                         "t" tuple of attrs, "m" {str: attr}, "e" [enum
                                         class, value], "z" [enum class, [values]]
    op:     [name, [operand value ids], [[result type, name hint], ...],
             {attribute: attr}, {property: attr}, location attr,
             [[[[arg type, arg location, name hint], ...], [op, ...]] per block] per region]

``class`` is ``"<IR name>|<Python class name>"``.  Values are numbered in definition order (block arguments, then op results, walking the
module in order).  Attribute and op names are looked up in the nki-mlir context only.
A module this form cannot hold (successors, forward references, attributes of other
kinds) is not encoded (:func:`encode` returns None) and the text is parsed instead.
"""
from __future__ import annotations

import enum
import hashlib
import json

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import (Attribute, Block, Data, OpResult, Operation, ParametrizedAttribute, Region,
                     SSAValue, SSAValues, Use)

FORMAT = "nki-mlir-compact-ir"
VERSION = 1


class CompactError(ValueError):
    """A compact module that cannot be decoded (damaged, foreign or of another version)."""


class _Unencodable(Exception):
    pass


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ----------------------------------------------------------------------------- encode


class _Encoder:
    """Numbers the attributes (by object, kept alive in ``keep``, then by equality) and the
    values (by object: an ``SSAValue`` equals only itself) of one module as it is encoded."""

    def __init__(self):
        self.attrs: list = []
        self.index: dict = {}
        self.ids: dict[int, int] = {}        # id(attribute) -> entry: the same object again
        self.keep: list = []                 # the attributes of ``ids`` (kept alive)
        self.values: dict[int, int] = {}     # id(value) -> number

    def attr(self, a: Attribute) -> int:
        i = self.ids.get(id(a))
        if i is not None:
            return i
        try:
            i = self.index.get(a)
        except TypeError:            # unhashable payload
            raise _Unencodable(type(a).__name__) from None
        if i is None:
            i = self._entry(a)
            self.index[a] = i
        self.ids[id(a)] = i
        self.keep.append(a)
        return i

    def _entry(self, a: Attribute) -> int:
        """Append the entry of an attribute not seen yet (its parameters first)."""
        cls = type(a)
        key = _key(cls)
        if _attr_class(key) is not cls:
            raise _Unencodable(key)
        if isinstance(a, ParametrizedAttribute):
            entry = ["p", key, [self.attr(p) for p in a.parameters]]
        elif isinstance(a, Data):
            entry = ["d", key, *self.data(a.data)]
        else:
            raise _Unencodable(cls.name)
        self.attrs.append(entry)
        return len(self.attrs) - 1

    def data(self, d) -> list:
        if isinstance(d, enum.Enum):
            self.enum(type(d))
            return ["e", [type(d).__qualname__, d.value]]
        if isinstance(d, bool):
            return ["b", d]
        if isinstance(d, int):
            return ["i", d]
        if isinstance(d, float):
            return ["f", d.hex()]
        if isinstance(d, str):
            return ["s", d]
        if isinstance(d, bytes):
            return ["y", d.hex()]
        if isinstance(d, frozenset) and all(isinstance(x, enum.Enum) for x in d):
            kinds = {type(x) for x in d}
            if len(kinds) > 1:
                raise _Unencodable("mixed enum set")
            et = kinds.pop() if kinds else None
            if et is not None:
                self.enum(et)
            return ["z", [et.__qualname__ if et else None, sorted(x.value for x in d)]]
        if isinstance(d, tuple) and all(isinstance(x, Attribute) for x in d):
            return ["t", [self.attr(x) for x in d]]
        if isinstance(d, dict) and all(isinstance(k, str) and isinstance(v, Attribute)
                                       for k, v in d.items()):
            return ["m", {k: self.attr(v) for k, v in d.items()}]
        raise _Unencodable(type(d).__name__)

    @staticmethod
    def enum(et: type) -> None:
        if _enum_class(et.__qualname__) is not et:
            raise _Unencodable(et.__qualname__)

    def op(self, op: Operation) -> list:
        if op._successors:                                       # noqa: SLF001
            raise _Unencodable("successors")
        values, ids, attr, results, regions = self.values, self.ids, self.attr, [], []
        try:
            operands = [values[id(v)] for v in op._operands]     # noqa: SLF001
        except KeyError:
            raise _Unencodable("forward reference") from None
        for r in op.results:
            values[id(r)] = len(values)
            t = r.type
            results.append([i if (i := ids.get(id(t))) is not None else attr(t), r.name_hint])
        for region in op.regions:
            blocks = []
            block = region._first_block                          # noqa: SLF001
            while block is not None:
                args = []
                for a in block.args:
                    values[id(a)] = len(values)
                    args.append([attr(a.type), attr(a.location), a.name_hint])
                ops = []
                o = block._first_op                              # noqa: SLF001
                while o is not None:
                    ops.append(self.op(o))
                    o = o._next_op                               # noqa: SLF001
                blocks.append([args, ops])
                block = block._next_block                        # noqa: SLF001
            regions.append(blocks)
        loc = op.location    # (attributes, properties and location as they were numbered)
        return [op.name, operands, results,
                {k: i if (i := ids.get(id(v))) is not None else attr(v)
                 for k, v in op.attributes.items()},
                {k: i if (i := ids.get(id(v))) is not None else attr(v)
                 for k, v in op.properties.items()},
                i if (i := ids.get(id(loc))) is not None else attr(loc), regions]


def encode(module: ModuleOp, text: str | None) -> str | None:
    """The compact form of ``module`` (whose printed form is ``text``; None: a form stored
    without its text, ``"text_sha256": null``), or None when the module holds something the
    form cannot (then the text is stored instead)."""
    enc = _Encoder()
    try:
        top = enc.op(module)
    except _Unencodable:
        return None
    digest = None if text is None else text_digest(text)
    return json.dumps({"format": FORMAT, "version": VERSION, "text_sha256": digest,
                       "attrs": enc.attrs, "op": top}, separators=(",", ":"))


# ----------------------------------------------------------------------------- decode

_CTX: list = []


def _context():
    if not _CTX:
        from ..dialects import make_context
        _CTX.append(make_context())
    return _CTX[0]


_CLASSES: dict = {}


def _key(cls) -> str:
    """An attribute class's key in the form: its IR name and Python class name (IR names
    alone are not unique: ``array`` is both ``ArrayAttr`` and ``DenseArrayBase``)."""
    return f"{cls.name}|{cls.__qualname__}"


def _attr_class(key: str):
    """The attribute or type class of ``key`` among those of the nki-mlir context (every
    registered dialect) and xDSL's builtin ones: a closed table, nothing is imported by name."""
    if not _CLASSES:
        from xdsl.dialects import builtin
        ctx = _context()
        for name in list(ctx.registered_dialect_names):
            if name not in {d.name for d in ctx.loaded_dialects}:
                ctx.load_registered_dialect(name)
        found = [*ctx.loaded_attrs, *ctx.loaded_types,
                 *(c for c in vars(builtin).values() if isinstance(c, type))]
        for c in found:
            if issubclass(c, Attribute) and isinstance(getattr(c, "name", None), str):
                _CLASSES.setdefault(_key(c), c)
    return _CLASSES.get(key)


_ENUMS: dict = {}


def _enum_class(name: str):
    """The enum class named ``name`` among the ``enum_type`` of the known attribute classes
    and the enums of xDSL's builtin dialect (a closed table, like :func:`_attr_class`)."""
    if not _ENUMS:
        from xdsl.dialects import builtin
        _attr_class("")
        cands = [getattr(c, "enum_type", None) for c in _CLASSES.values()]
        cands += list(vars(builtin).values())
        for e in cands:
            if isinstance(e, type) and issubclass(e, enum.Enum):
                _ENUMS.setdefault(e.__qualname__, e)
    return _ENUMS.get(name)


class _Decoder:
    """Rebuilds the attributes and ops of one compact module.

    Nothing is verified again (the form is checksummed and was made from a verified module
    by this compiler), and the ops are built as ``Operation.create`` builds them minus its
    per-op generic work: each attribute kind and op class is resolved once per process
    (:func:`_maker`), an op's fields are set directly, name hints are checked once per
    distinct hint.  Malformed data raises :class:`CompactError` (or an ``IndexError`` /
    ``TypeError`` / ``ValueError`` that :func:`decode` reports as one)."""

    def __init__(self, attrs: list):
        self.ctx = _context()
        self.values: list[SSAValue] = []
        table: list[Attribute] = []
        self.attrs = table
        if not isinstance(attrs, list):
            raise CompactError("malformed attribute table")
        append = table.append
        makers = _MAKERS
        for entry in attrs:
            try:
                make = makers[entry[0], entry[1]]
            except (KeyError, TypeError):
                make = _maker(entry)
            append(make(entry, table))

    def ref(self, i) -> Attribute:
        if type(i) is not int or i < 0:
            raise CompactError(f"attribute reference {i!r} out of range")
        return self.attrs[i]     # (an IndexError past the end: decode() reports it)

    def op(self, e) -> Operation:
        name, operands, results, attributes, properties, loc, regions = e
        cls = _OPS.get(name)
        if cls is None:
            cls = self.ctx.get_optional_op(name) if isinstance(name, str) else None
            if cls is None:
                raise CompactError(f"unknown op {name!r}")
            _OPS[name] = cls
        table, values = self.attrs, self.values
        # references are indices (never negative: min() of them; a non-integer raises
        # TypeError, one past the end IndexError, both reported by decode())
        if operands and min(operands) < 0 or properties and min(properties.values()) < 0 or \
                attributes and min(attributes.values()) < 0:
            raise CompactError(f"{name}: reference out of range")
        try:
            ins = SSAValues([values[i] for i in operands])
        except (IndexError, TypeError):
            raise CompactError(f"{name}: operand reference out of range") from None
        new = cls.__new__(cls)
        # as Operation.__init__ (xDSL 0.74): operands and their uses, results, properties,
        # attributes, location, no successors, regions; the properties are the encoded
        # module's own (its defaults were filled when it was built)
        uses = tuple([Use(new, k) for k in range(len(ins))])
        for v, u in zip(ins, uses):
            v.add_use(u)
        new._operands = ins
        new._operand_uses = uses
        rs = []
        for k, (t, hint) in enumerate(results):
            if t < 0:
                raise CompactError(f"{name}: reference out of range")
            r = OpResult(table[t], new, k)
            if hint is not None:
                r._name = _hint(hint)
            rs.append(r)
        values.extend(rs)
        new.results = SSAValues(rs)
        new.properties = {k: table[i] for k, i in properties.items()}
        new.attributes = {k: table[i] for k, i in attributes.items()}
        new.location = self.ref(loc)
        new._successors = new._successor_uses = ()
        new.parent = new._next_op = new._prev_op = None
        new.regions = ()
        if regions:
            for blocks in regions:
                new.add_region(Region([self.block(args, ops) for args, ops in blocks]))
        return new

    def block(self, args: list, ops: list) -> Block:
        ref = self.ref
        block = Block(arg_types=[ref(a[0]) for a in args])
        for a, (_, aloc, hint) in zip(block.args, args):
            a.location = ref(aloc)
            if hint is not None:
                a._name = _hint(hint)
            self.values.append(a)
        block.add_ops([self.op(o) for o in ops])
        return block


#: op name -> op class of the nki-mlir context (filled as names are met)
_OPS: dict = {}
#: (entry kind, attribute key) -> the function rebuilding such an entry (see :func:`_maker`)
_MAKERS: dict = {}
#: name hint as written -> as the ``name_hint`` setter stores it
_HINTS: dict = {}


def _hint(h):
    got = _HINTS.get(h)
    if got is None:
        if not isinstance(h, str):
            raise CompactError(f"malformed name hint {h!r}")
        got = _HINTS[h] = SSAValue.extract_valid_name(h)     # ValueError: decode() reports
    return got


def _maker(entry):
    """The function ``make(entry, table)`` rebuilding attribute entries of ``entry``'s kind
    and class (made once per kind and class, then kept in :data:`_MAKERS`): a parametrized
    attribute from earlier entries of ``table``, a data attribute from its payload; as
    ``ParametrizedAttribute.new`` / ``Data.new`` without the verifier."""
    if not isinstance(entry, list) or len(entry) < 3:
        raise CompactError(f"malformed attribute entry {entry!r}")
    kind, name = entry[0], entry[1]
    cls = _attr_class(name) if isinstance(name, str) else None
    if cls is None:
        raise CompactError(f"unknown attribute {name!r}")
    new, setattr_ = cls.__new__, object.__setattr__
    if kind == "p" and issubclass(cls, ParametrizedAttribute):
        fields = tuple(f for f, _ in cls.get_irdl_definition().parameters)
        n = len(fields)

        def make(e, table):
            params = e[2]
            if type(params) is not list or len(params) != n:
                raise CompactError(f"{name}: expected {n} parameters")
            attr = new(cls)
            for f, i in zip(fields, params):
                if type(i) is not int or i < 0:
                    raise CompactError(f"attribute reference {i!r} out of range")
                setattr_(attr, f, table[i])
            return attr
    elif kind == "d" and issubclass(cls, Data):
        kinds = _DATA

        def make(e, table):
            data = kinds.get(e[2]) if len(e) == 4 else None
            if data is None:
                raise CompactError(f"malformed attribute entry for {name!r}")
            attr = new(cls)
            setattr_(attr, "data", data(e[2], e[3], table, cls))
            return attr
    else:
        raise CompactError(f"malformed attribute entry for {name!r}")
    _MAKERS[kind, name] = make
    return make


def _payload(kind: str, ok, conv):
    def data(k, payload, table, cls):
        if k != kind or not ok(payload):
            raise CompactError(f"malformed {k!r} data of {cls.name}")
        return conv(payload, table)
    return data


def _refs(payload, table) -> tuple:
    if any(type(i) is not int or i < 0 for i in payload):
        raise CompactError("attribute reference out of range")
    return tuple([table[i] for i in payload])


def _ref_map(payload, table) -> dict:
    if any(type(i) is not int or i < 0 for i in payload.values()):
        raise CompactError("attribute reference out of range")
    return {str(k): table[i] for k, i in payload.items()}


def _enum_data(k, payload, table, cls):
    if isinstance(payload, list) and len(payload) == 2:
        name, value = payload
        if k == "z" and name is None and value == []:
            return frozenset()
        et = _enum_class(name) if isinstance(name, str) else None
        if et is not None:
            return et(value) if k == "e" else frozenset(et(v) for v in value)
    raise CompactError(f"malformed {k!r} data of {cls.name}")


#: data payload kind -> ``data(kind, payload, table, cls)``: the ``data`` of the attribute
_DATA = {
    "i": _payload("i", lambda p: type(p) is int, lambda p, t: p),
    "b": _payload("b", lambda p: type(p) is bool, lambda p, t: p),
    "f": _payload("f", lambda p: isinstance(p, str), lambda p, t: float.fromhex(p)),
    "s": _payload("s", lambda p: isinstance(p, str), lambda p, t: p),
    "y": _payload("y", lambda p: isinstance(p, str), lambda p, t: bytes.fromhex(p)),
    "t": _payload("t", lambda p: isinstance(p, list), _refs),
    "m": _payload("m", lambda p: isinstance(p, dict), _ref_map),
    "e": _enum_data,
    "z": _enum_data,
}


def decode(data: str, text: str | None = None) -> ModuleOp:
    """The module of a compact form made by :func:`encode`.

    Args:
        data: the compact form (JSON text).
        text: the module's printed form it must have been made with (checked by digest).

    Raises:
        CompactError: foreign, other-version, damaged data or another text's form.
    """
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise CompactError(f"unreadable compact IR ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CompactError("not an nki-mlir compact IR")
    if doc.get("version") != VERSION:
        raise CompactError(f"compact IR version {doc.get('version')!r}, this compiler reads "
                           f"version {VERSION}")
    if text is not None and doc.get("text_sha256") != text_digest(text):
        raise CompactError("the compact IR was not made from this module's text")
    try:
        module = _Decoder(doc["attrs"]).op(doc["op"])
    except CompactError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise CompactError(f"malformed compact IR ({type(exc).__name__}: {exc})") from None
    if not isinstance(module, ModuleOp):
        raise CompactError("the compact IR does not hold a builtin.module")
    return module
