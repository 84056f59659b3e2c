"""MkDocs hook: expand ``<!-- nki-builtins: nl -->`` / ``<!-- nki-builtins: nisa -->`` into a
table of the API names nki-mlir compiles.

``nl.*`` / ``nisa.*`` functions are :class:`~nki_mlir.frontend.builtins.Builtin` markers
created in a loop, so mkdocstrings (static analysis) cannot list them.  This table is built
from the live objects: each name, its signature (its frontend handler's, as
``inspect.signature`` reports it) and the first line of the handler's docstring.
"""
from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

# document this checkout's nki_mlir (as mkdocstrings' ``paths: [.]`` does), installed or not
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

MARKER = re.compile(r"<!-- nki-builtins: (nl|nisa) -->")
FUNCTION = re.compile(r"<!-- nki-function: ([\w.]+):(\w+) -->")


ROLE = re.compile(r":\w+:`~?([^`]+)`")


def _md(text: str) -> str:
    """Docstring reST (``x``, :class:`~a.b.C`) as markdown."""
    return ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text).replace("``", "`")


def _cell(text: str) -> str:
    """:func:`_md`, escaped for a table cell."""
    return _md(text).replace("|", "\\|").replace("\n", " ")


def builtin_table(prefix: str) -> str:
    """The markdown table of every Builtin in ``nki_mlir.language`` (nl) or ``.isa`` (nisa)."""
    import nki_mlir.isa as nisa
    import nki_mlir.language as nl
    from nki_mlir.frontend.builtins import HANDLERS, Builtin

    module = {"nl": nl, "nisa": nisa}[prefix]
    rows = ["| name | signature | what it does |", "| --- | --- | --- |"]
    for name in sorted(module.__all__):
        obj = getattr(module, name)
        if not isinstance(obj, Builtin):
            continue
        handler = HANDLERS.get(obj.name)
        if handler is None:      # an op token only (e.g. nl.bypass): no call of its own
            sig, doc = "", f"op token ``{obj.token}`` (an ``op=`` value)"
        else:
            sig = str(inspect.signature(obj))
            doc = (inspect.getdoc(handler) or "").split("\n\n")[0].replace("\n", " ")
            if obj.token:
                doc = f"op token ``{obj.token}``; as a function: {doc}" if doc else f"op token ``{obj.token}``"
        rows.append(f"| `{prefix}.{name}` | `{_cell(sig)}` | {_cell(doc)} |")
    return "\n".join(rows)


def function_doc(module_name: str, name: str) -> str:
    """A heading with the signature of ``module_name.name`` and its Google-style docstring
    as markdown: for a function that a same-named submodule hides from static analysis
    (``nki_mlir.perf.estimate`` and the module ``nki_mlir/perf/estimate.py``)."""
    import importlib

    fn = getattr(importlib.import_module(module_name), name)
    sig = inspect.signature(fn)
    bare = sig.replace(parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                       return_annotation=sig.empty)
    returns = sig.return_annotation
    returns = "" if returns is sig.empty else f" -> {getattr(returns, '__name__', returns)}"
    out = [f"## `{module_name}.{name}`", "", f"`{name}{bare}{returns}`", ""]
    for line in (inspect.getdoc(fn) or "").splitlines():
        if re.fullmatch(r"(Args|Returns|Raises|Yields|Attributes):", line):
            out += ["", f"**{line[:-1]}:**", ""]
        elif re.match(r"    \S", line):           # an entry: "name: text"
            entry, _, text = line.strip().partition(": ")
            out.append(f"- `{entry}`: {_md(text)}" if text else f"- {_md(entry)}")
        elif line.startswith("        ") and out and out[-1].startswith("- "):
            out[-1] += " " + _md(line.strip())
        else:
            out.append(_md(line))
    return "\n".join(out)


#: a Sphinx role left in a docstring rendered by mkdocstrings: ``:class:<code>~a.b.C</code>``
HTML_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):(<code>)(~?)([^<]*)</code>")


def on_page_content(html: str, **_kwargs) -> str:
    """Docstrings are written for Sphinx (``:func:`x```); show such a role as plain code, the
    last name only for ``~a.b.C``, as Sphinx does."""
    return HTML_ROLE.sub(lambda m: f"<code>{m.group(3).rsplit('.', 1)[-1] if m.group(2) else m.group(3)}</code>",
                         html)


def on_page_markdown(markdown: str, **_kwargs) -> str:
    markdown = FUNCTION.sub(lambda m: function_doc(m.group(1), m.group(2)), markdown)
    return MARKER.sub(lambda m: builtin_table(m.group(1)), markdown)
