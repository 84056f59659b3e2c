"""A compact, versioned, non-executable form of a final ``nisa`` module, for fast cache hits.

Parsing the printed module again costs tens of milliseconds; rebuilding the same ops from
this form costs about a millisecond.  The form is JSON (never pickle: nothing in it is
executed or imported) and is stored in the artifact next to ``kernel.nisa.mlir``, covered
by the manifest's checksums like every other file; it also records the SHA-256 of the
text it was made with, so it is only used together with exactly that text.

Layout (``FORMAT`` / ``VERSION``)::

    {"format": "nki-mlir-compact-ir", "version": 1, "text_sha256": "<hex>",
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
from xdsl.ir import Attribute, Block, Data, Operation, ParametrizedAttribute, Region, SSAValue

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
    def __init__(self):
        self.attrs: list = []
        self.index: dict = {}
        self.by_id: dict[int, tuple[Attribute, int]] = {}   # the same object again: no hashing
        self.values: dict[SSAValue, int] = {}

    def attr(self, a: Attribute) -> int:
        hit = self.by_id.get(id(a))
        if hit is not None and hit[0] is a:
            return hit[1]
        try:
            i = self.index.get(a)
        except TypeError:            # unhashable payload
            raise _Unencodable(type(a).__name__) from None
        if i is None:
            i = self._entry(a)
            self.index[a] = i
        self.by_id[id(a)] = (a, i)   # keeps ``a`` alive: its id stays unique
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

    def define(self, v: SSAValue) -> None:
        self.values[v] = len(self.values)

    def op(self, op: Operation) -> list:
        if op.successors:
            raise _Unencodable("successors")
        try:
            operands = [self.values[v] for v in op.operands]
        except KeyError:
            raise _Unencodable("forward reference") from None
        results = []
        for r in op.results:
            self.define(r)
            results.append([self.attr(r.type), r.name_hint])
        regions = []
        for region in op.regions:
            blocks = []
            for block in region.blocks:
                args = []
                for a in block.args:
                    self.define(a)
                    args.append([self.attr(a.type), self.attr(a.location), a.name_hint])
                blocks.append([args, [self.op(o) for o in block.ops]])
            regions.append(blocks)
        return [op.name, operands, results,
                {k: self.attr(v) for k, v in op.attributes.items()},
                {k: self.attr(v) for k, v in op.properties.items()},
                self.attr(op.location), regions]


def encode(module: ModuleOp, text: str) -> str | None:
    """The compact form of ``module`` (whose printed form is ``text``), or None when the
    module holds something the form cannot (then only the text is stored)."""
    enc = _Encoder()
    try:
        top = enc.op(module)
    except _Unencodable:
        return None
    return json.dumps({"format": FORMAT, "version": VERSION, "text_sha256": text_digest(text),
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
    def __init__(self, attrs: list):
        self.ctx = _context()
        self.attrs: list[Attribute] = []
        self.values: list[SSAValue] = []
        for entry in attrs:
            self.attrs.append(self.attr(entry))

    def ref(self, i) -> Attribute:
        if not isinstance(i, int) or not 0 <= i < len(self.attrs):
            raise CompactError(f"attribute reference {i!r} out of range")
        return self.attrs[i]

    def attr(self, entry) -> Attribute:
        kind, name = entry[0], entry[1]
        cls = _attr_class(name) if isinstance(name, str) else None
        if cls is None:
            raise CompactError(f"unknown attribute {name!r}")
        if kind == "p" and issubclass(cls, ParametrizedAttribute):
            # as ParametrizedAttribute.new without the verifier: the form is checksummed and
            # was made from a verified module by this compiler version
            params = entry[2]
            fields = cls.get_irdl_definition().parameters
            if not isinstance(params, list) or len(params) != len(fields):
                raise CompactError(f"{name}: expected {len(fields)} parameters")
            attr = cls.__new__(cls)
            for (f, _), i in zip(fields, params):
                object.__setattr__(attr, f, self.ref(i))
            return attr
        if kind == "d" and issubclass(cls, Data):
            attr = cls.__new__(cls)      # as Data.new, without the verifier (see above)
            object.__setattr__(attr, "data", self.data(cls, entry[2], entry[3]))
            return attr
        raise CompactError(f"malformed attribute entry for {name!r}")

    def data(self, cls, kind: str, payload):
        if kind == "i" and type(payload) is int:
            return payload
        if kind == "b" and type(payload) is bool:
            return payload
        if kind == "f" and isinstance(payload, str):
            return float.fromhex(payload)
        if kind == "s" and isinstance(payload, str):
            return payload
        if kind == "y" and isinstance(payload, str):
            return bytes.fromhex(payload)
        if kind == "t" and isinstance(payload, list):
            return tuple(self.ref(i) for i in payload)
        if kind == "m" and isinstance(payload, dict):
            return {str(k): self.ref(i) for k, i in payload.items()}
        if kind in ("e", "z") and isinstance(payload, list) and len(payload) == 2:
            name, value = payload
            if kind == "z" and name is None and value == []:
                return frozenset()
            et = _enum_class(name) if isinstance(name, str) else None
            if et is not None:
                return et(value) if kind == "e" else frozenset(et(v) for v in value)
        raise CompactError(f"malformed {kind!r} data of {cls.name}")

    def op(self, e) -> Operation:
        name, operands, results, attributes, properties, loc, regions = e
        cls = self.ctx.get_optional_op(name)
        if cls is None:
            raise CompactError(f"unknown op {name!r}")
        try:
            ins = [self.values[i] for i in operands]
        except (IndexError, TypeError):
            raise CompactError(f"{name}: operand reference out of range") from None
        regs = []
        for blocks in regions:
            region_blocks = []
            for args, ops in blocks:
                block = Block(arg_types=[self.ref(a[0]) for a in args])
                for a, (_, aloc, hint) in zip(block.args, args):
                    a.location = self.ref(aloc)
                    if hint is not None:
                        a.name_hint = hint
                    self.values.append(a)
                block.add_ops([self.op(o) for o in ops])
                region_blocks.append(block)
            regs.append(Region(region_blocks))
        new = cls.create(operands=ins, result_types=[self.ref(r[0]) for r in results],
                         attributes={k: self.ref(i) for k, i in attributes.items()},
                         properties={k: self.ref(i) for k, i in properties.items()},
                         location=self.ref(loc), regions=regs)
        for r, (_, hint) in zip(new.results, results):
            if hint is not None:
                r.name_hint = hint
            self.values.append(r)
        return new


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
