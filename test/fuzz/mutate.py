"""Seeded mutators: of a Python kernel's AST (:func:`mutate_kernel`) and of ``.mlir`` text
(:func:`mutate_mlir`).  ``random.Random(seed)`` decides everything, so a case is replayed
from its seed alone."""
from __future__ import annotations

import ast
import copy
import random
import re

INTS = [0, 1, -1, 2, 3, 7, 63, 64, 127, 128, 129, 255, 256, 511, 512, 513, 1024, 4096, 65536,
        2 ** 31, 2 ** 63, 2 ** 64, -128, 10 ** 30]
FLOATS = [0.0, -0.0, 0.5, -1.5, 1e-45, 3.0e38, 1e39, float("inf"), float("nan")]
ODD = [None, "x", (), (1, 2), [128], True]
NL_NAMES = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "exp", "tanh",
            "float32", "bfloat16", "float16", "int32", "int8", "uint8", "bool_", "float8_e4m3",
            "sbuf", "psum", "hbm", "shared_hbm", "private_hbm", "affine_range", "sequential_range",
            "static_range", "par_dim", "load", "store", "ndarray", "zeros", "copy", "sum", "max",
            "abs", "sqrt", "rsqrt", "transpose", "matmul", "arange", "mgrid"]
NISA_NAMES = ["dma_copy", "tensor_copy", "tensor_scalar", "tensor_tensor", "activation",
              "tensor_reduce", "nc_matmul", "nc_transpose", "memset", "iota", "select_reduce",
              "tensor_tensor_scan", "range_select", "affine_select", "max8", "dropout"]


def _nodes(tree: ast.AST, kind) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, kind)]


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    out = {}
    for p in ast.walk(tree):
        for field, value in ast.iter_fields(p):
            if isinstance(value, list):
                for i, c in enumerate(value):
                    if isinstance(c, ast.AST):
                        out[id(c)] = (p, field, i)
            elif isinstance(value, ast.AST):
                out[id(value)] = (p, field, None)
    return out


def _constant(rng: random.Random, fn: ast.FunctionDef) -> bool:
    cs = [c for c in _nodes(fn, ast.Constant) if not isinstance(c.value, str) or rng.random() < 0.2]
    if not cs:
        return False
    c = rng.choice(cs)
    pool = rng.choice([INTS, FLOATS, ODD]) if rng.random() < 0.3 else (
        FLOATS if isinstance(c.value, float) else INTS)
    c.value = rng.choice(pool)
    return True


def _attribute(rng: random.Random, fn: ast.FunctionDef) -> bool:
    attrs = [a for a in _nodes(fn, ast.Attribute) if isinstance(a.value, ast.Name)
             and a.value.id in ("nl", "nisa")]
    if not attrs:
        return False
    a = rng.choice(attrs)
    a.attr = rng.choice(NL_NAMES if a.value.id == "nl" else NISA_NAMES)
    if rng.random() < 0.1:
        a.value.id = "nisa" if a.value.id == "nl" else "nl"
    return True


def _name(rng: random.Random, fn: ast.FunctionDef) -> bool:
    loads = [n for n in _nodes(fn, ast.Name) if isinstance(n.ctx, ast.Load) and n.id not in ("nl", "nisa")]
    names = sorted({n.id for n in _nodes(fn, ast.Name)} | {a.arg for a in fn.args.args})
    if not loads or len(names) < 2:
        return False
    rng.choice(loads).id = rng.choice(names)
    return True


def _statement(rng: random.Random, fn: ast.FunctionDef) -> bool:
    bodies = [n.body for n in ast.walk(fn) if hasattr(n, "body") and isinstance(n.body, list) and n.body]
    body = rng.choice(bodies)
    i = rng.randrange(len(body))
    op = rng.random()
    if op < 0.45 and len(body) > 1:
        del body[i]
    elif op < 0.8:
        body.insert(i, copy.deepcopy(body[rng.randrange(len(body))]))
    else:
        j = rng.randrange(len(body))
        body[i], body[j] = body[j], body[i]
    return True


def _keyword(rng: random.Random, fn: ast.FunctionDef) -> bool:
    calls = [c for c in _nodes(fn, ast.Call) if c.keywords]
    if not calls:
        return False
    c = rng.choice(calls)
    op = rng.random()
    k = rng.randrange(len(c.keywords))
    if op < 0.35:
        del c.keywords[k]
    elif op < 0.6:
        c.keywords[k].arg = rng.choice(["dst", "src", "data", "op", "op0", "operand0", "axis",
                                        "dtype", "buffer", "value", "bogus", "mask", "shape"])
    elif len(c.keywords) > 1:
        j = rng.randrange(len(c.keywords))
        c.keywords[k].value, c.keywords[j].value = c.keywords[j].value, c.keywords[k].value
    else:
        c.args.append(copy.deepcopy(c.keywords[k].value))
    return True


def _slice(rng: random.Random, fn: ast.FunctionDef) -> bool:
    subs = _nodes(fn, ast.Subscript)
    if not subs:
        return False
    s = rng.choice(subs)
    delta = rng.choice([1, -1, 64, 128, -128, 1000])
    new = ast.BinOp(s.slice, ast.Add(), ast.Constant(delta)) if not isinstance(s.slice, (ast.Slice, ast.Tuple)) \
        else None
    if isinstance(s.slice, ast.Tuple) and s.slice.elts:
        e = rng.randrange(len(s.slice.elts))
        el = s.slice.elts[e]
        if isinstance(el, ast.Slice):
            side = rng.choice(["lower", "upper", "step"])
            cur = getattr(el, side) or ast.Constant(0 if side == "lower" else 1)
            setattr(el, side, ast.BinOp(cur, ast.Add(), ast.Constant(delta)))
        elif rng.random() < 0.5:
            s.slice.elts.append(ast.Slice(None, None, None))
        else:
            s.slice.elts[e] = ast.BinOp(el, ast.Add(), ast.Constant(delta))
    elif isinstance(s.slice, ast.Slice):
        s.slice.upper = ast.BinOp(s.slice.upper or ast.Constant(0), ast.Add(), ast.Constant(delta))
    elif new is not None:
        s.slice = new
    return True


def _call(rng: random.Random, fn: ast.FunctionDef) -> bool:
    calls = [c for c in _nodes(fn, ast.Call) if c.args]
    if not calls:
        return False
    c = rng.choice(calls)
    op = rng.random()
    if op < 0.4:
        del c.args[rng.randrange(len(c.args))]
    elif op < 0.7:
        c.args.append(ast.Constant(rng.choice(INTS + ODD)))
    else:
        rng.shuffle(c.args)
    return True


MUTATORS = [_constant, _attribute, _name, _statement, _keyword, _slice, _call]


def mutate_kernel(source: str, kernel: str, seed: int) -> str | None:
    """The module ``source`` with 1-3 random mutations of function ``kernel``'s body, as
    source text; ``None`` if the mutant is not valid Python."""
    rng = random.Random(seed)
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel)
    done = 0
    for _ in range(20):
        if done >= rng.randint(1, 3):
            break
        done += bool(rng.choice(MUTATORS)(rng, fn))
    try:
        text = ast.unparse(ast.fix_missing_locations(tree))
        compile(text, "<mutant>", "exec")
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return None
    return text


def mutate_args(spec: list, seed: int) -> list:
    """The seed's argument specs, sometimes with a dim or dtype changed."""
    rng = random.Random(seed ^ 0x5EED)
    out = []
    for s in spec:
        if isinstance(s, tuple) and rng.random() < 0.15:
            shape, dt = s
            if rng.random() < 0.6:
                shape = tuple(rng.choice([d, d * 2, d // 2 or 1, d + 1, 1]) for d in shape)
            else:
                dt = rng.choice(["float32", "bfloat16", "float16", "int32", "int8", "float64"])
            s = (shape, dt)
        elif not isinstance(s, tuple) and rng.random() < 0.15:
            s = rng.choice(INTS + FLOATS + ODD)
        out.append(s)
    return out


# ------------------------------------------------------------------------- MLIR text
_TOKEN = re.compile(r"%[\w.$-]+|@[\w.$-]+|#[\w.]+|!?[a-z_][\w.]*|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|\S")


def mutate_mlir(text: str, seed: int) -> str:
    """``text`` (one ``.mlir`` chunk) with 1-3 random line- or token-level mutations."""
    rng = random.Random(seed)
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        body = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("//")]
        if not body:
            break
        i = rng.choice(body)
        op = rng.random()
        if op < 0.15:
            del lines[i]
        elif op < 0.25:
            lines.insert(i, lines[rng.choice(body)])
        elif op < 0.3:
            lines = lines[:i] + [lines[i][: rng.randrange(len(lines[i]) + 1)]]
        else:
            toks = list(_TOKEN.finditer(lines[i]))
            if not toks:
                continue
            t = rng.choice(toks)
            tok = t.group()
            if re.fullmatch(r"-?\d+", tok):
                new = str(rng.choice(INTS))
            elif re.fullmatch(r"-?\d+\.\d+.*", tok):
                new = repr(rng.choice(FLOATS[:7]))
            else:
                pool = [m.group() for ln in lines for m in _TOKEN.finditer(ln)]
                new = rng.choice(pool) if rng.random() < 0.8 else ""
            lines[i] = lines[i][: t.start()] + new + lines[i][t.end():]
    return "\n".join(lines)
