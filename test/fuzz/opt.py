"""``nki-opt`` fuzzer: mutated ``.mlir`` chunks of our lit tests, under their own pass
pipelines and random ones.

Case ``seed``: one ``// -----`` chunk of a ``test/lit`` file, usually mutated by
:func:`~.mutate.mutate_mlir`, run through :class:`~nki_mlir.tools.nki_opt.NkiOptMain` with the
``-p`` pipeline of the file's RUN line or a random pipeline of our passes and options.
Exit 0, or exit 1 with a located diagnostic (``file:line:col`` or ``<pipeline>:1:col``), is
fine; exit 1 without a location, exit 2 (internal compiler error) or an escaping exception
is a finding.
"""
from __future__ import annotations

import contextlib
import io
import os
import random
import re
import tempfile
from pathlib import Path

from .mutate import mutate_mlir

LIT = Path(__file__).resolve().parents[1] / "lit"
_DIR = tempfile.mkdtemp(prefix="nki-fuzz-opt-")
PASSES = ["nki-legalize", "lower-nki-to-nisa", "nisa-allocate", "nisa-schedule", "canonicalize", "cse"]
OPTIONS = ["{target=trn1}", "{target=trn3}", "{target=bogus}", "{max_copies=2}", "{max_copies=0}",
           "{mode=in-order}", "{mode=list}", "{mode=bogus}", "{x=1}", "{", ""]


def _chunks() -> list[tuple[str, str | None]]:
    out = []
    for f in sorted(LIT.rglob("*.mlir")):
        if "Output" in f.parts or "upstream" in f.parts:
            continue
        text = f.read_text()
        m = re.search(r"-p\s+(?:'([^']*)'|\"([^\"]*)\"|(\S+))", text)
        pipeline = next((g for g in m.groups() if g), None) if m else None
        for chunk in text.split("// -----"):
            if chunk.strip():
                out.append((chunk, pipeline))
    return out


_CHUNKS = _chunks()
_LOCATED = re.compile(r"(\S+|<stdin>|<pipeline>):\d+:\d+")


def _pipeline(rng: random.Random, base: str | None) -> str | None:
    if base is not None and rng.random() < 0.7:
        return base
    passes = [p + (rng.choice(OPTIONS) if rng.random() < 0.3 else "")
              for p in rng.sample(PASSES, rng.randint(1, 4))]
    return ",".join(passes)


def case(seed: int) -> tuple[str, str]:
    from nki_mlir.tools.nki_opt import NkiOptMain
    rng = random.Random(seed)
    chunk, base = _CHUNKS[seed % len(_CHUNKS)]
    text = mutate_mlir(chunk, seed) if rng.random() < 0.85 else chunk
    pipeline = _pipeline(rng, base)
    path = os.path.join(_DIR, f"fuzz_{seed}.mlir")
    Path(path).write_text(text)
    args = [path] + (["-p", pipeline] if pipeline else [])
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                NkiOptMain(args=args).run()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:
        return "internal", f"{type(exc).__name__}: {str(exc)[:200]} (-p {pipeline!r})"
    finally:
        os.remove(path)
    msg = err.getvalue()
    if code == 0:
        return "ok", ""
    if code == 1 and _LOCATED.search(msg) and "Traceback" not in msg:
        return "located", msg.splitlines()[0][:200] if msg else ""
    kind = "internal" if code != 1 or "Traceback" in msg or "internal" in msg else "unlocated"
    return kind, f"exit {code}: {msg.strip().splitlines()[-1][:200] if msg.strip() else ''} (-p {pipeline!r})"
