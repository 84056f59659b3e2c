"""Seeded faults (issue 5): the interpreter's hazard checks catch every broken schedule or
placement that changes what a kernel computes, and name both instructions' source lines.

For each of >= 20 compiled kernels (examples/kernels.py, the pytest kernel files, and
fault_kernels.py) and each fault kind, a fixed-seed ``random.Random`` seeds ONE fault into
a fresh copy of the final ``nisa`` module:

- ``edge``: remove one entry of one instruction's ``nkim.deps`` or ``nkim.deps_carried``
  (docs/backend.md section C);
- ``shift``: move one on-chip buffer (``nkim.partition`` / ``nkim.offset`` [/ ``nkim.bank``])
  onto another buffer of the same memory whose live range overlaps its own
  (:mod:`nki_mlir.passes.liveness`), so the two share bytes while both are live.

The faulty module is decoded and run (a) on the engine queues without checks
(``Program.run(args, mode="queues", hazards=False)``): a result that differs bit-for-bit
from the unmodified module's run, or a run-time error, means the fault *changed
behaviour*; and (b) with checks (``hazards=True``): an ``NKIHazardError`` means it was
*detected*.  Required: changed => detected (0 missed), every shifted buffer is detected
(two live buffers on the same bytes is a hazard whether or not the values happen to
survive), and every report names >= 2 ``file:line`` source positions of the kernel.
Removed edges implied by the remaining ones (transitively, or by in-order queues) are
neither changed nor detected; they are counted separately ("implied").

Run with ``pytest -s`` to see the count line.
"""
from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

import nki_mlir as nki
from nki_mlir.compiler import parse_module
from nki_mlir.dialects.common import ON_CHIP, shape_of, space_of
from nki_mlir.dialects.nisa import AllocOp
from nki_mlir.errors import NKIError, NKIHazardError
from nki_mlir.dialects.effects import bytes_per_partition
from nki_mlir.passes.liveness import live_ranges
from nki_mlir.runtime.interpreter import decode
from nki_mlir.runtime.memory import PARTITIONS, PSUM_BANK_BYTES, PSUM_BYTES, SBUF_BYTES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(HERE))

import beta2_twin_kernels as twin  # noqa: E402
import fault_kernels as fk  # noqa: E402
import kernels as ex  # noqa: E402  (examples/kernels.py)
import kernels_for_tests as kt  # noqa: E402
import mask_kernels as mk  # noqa: E402

SEED = 5
BF16 = ml_dtypes.bfloat16
KINDS = ("edge", "shift")


def _f32(rng, *shape, lo=None):
    a = rng.standard_normal(shape).astype(np.float32)
    return np.abs(a) + lo if lo is not None else a


def _bf16(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32).astype(BF16)


#: (name, kernel, args(rng)): small shapes (several tiles where there is a loop); non-array
#: arguments are compile-time constants (not passed to Program.run).
#: Not here: beta2_twin_kernels.matmul_accum -- it accumulates (accumulate=True) onto PSUM
#: that nl.zeros initialised, undefined on trn2 (nki_spec.md nc_matmul) and a hazard the
#: checks rightly report on the unmodified kernel.
KERNELS = [
    ("tiled_matmul", ex.tiled_matmul, lambda r: (_bf16(r, 256, 256), _bf16(r, 256, 512))),
    ("row_softmax", ex.row_softmax, lambda r: (_f32(r, 256, 256),)),
    ("tensor_add", ex.tensor_add, lambda r: (_f32(r, 256, 512), _f32(r, 256, 512))),
    ("layernorm", ex.layernorm, lambda r: (_f32(r, 256, 256), _f32(r, 1, 256), _f32(r, 1, 256))),
    ("attention", ex.attention, lambda r: (_f32(r, 256, 128), _f32(r, 256, 128), _f32(r, 256, 128))),
    ("add", kt.add, lambda r: (_f32(r, 128, 64), _f32(r, 128, 64))),
    ("loop_copy", kt.loop_copy, lambda r: (_f32(r, 384, 64),)),
    ("two_outputs", kt.two_outputs, lambda r: (_f32(r, 128, 64),)),
    ("sugar", kt.sugar, lambda r: (_f32(r, 128, 64), _f32(r, 128, 64))),
    ("transpose_matmul", kt.transpose_matmul, lambda r: (_f32(r, 128, 128), _f32(r, 128, 512))),
    ("iota_memset", kt.iota_memset, lambda r: (_f32(r, 128, 64),)),
    ("tiled_add", twin.tiled_add, lambda r: (_f32(r, 256, 64), _f32(r, 256, 64))),
    ("scaled_rows", kt.scaled_rows, lambda r: (_f32(r, 128, 1024), 0.75, 2)),
    ("row_scale", twin.row_scale, lambda r: (_f32(r, 128, 64),)),
    ("ragged_rows", mk.ragged_rows, lambda r: (_f32(r, 200, 64), _f32(r, 200, 64))),
    ("ragged_2d", mk.ragged_2d, lambda r: (_f32(r, 200, 300),)),
    ("pipeline_scale", fk.pipeline_scale, lambda r: (_f32(r, 384, 64),)),
    ("seq_accumulate", fk.seq_accumulate, lambda r: (_f32(r, 384, 64),)),
    ("psum_accumulate", fk.psum_accumulate, lambda r: (_bf16(r, 384, 128), _bf16(r, 384, 256))),
    ("transpose_roundtrip", fk.transpose_roundtrip, lambda r: (_f32(r, 128, 128),)),
    ("iota_mix", fk.iota_mix, lambda r: (_f32(r, 128, 64),)),
    ("column_partials", fk.column_partials, lambda r: (_f32(r, 128, 512),)),
    ("reuse_tile", fk.reuse_tile, lambda r: (_f32(r, 128, 64),)),
    ("nested_tiles", fk.nested_tiles, lambda r: (_f32(r, 256, 512),)),
    ("matmul_bias", fk.matmul_bias,
     lambda r: (_f32(r, 128, 128), _f32(r, 128, 512), _f32(r, 128, 512))),
]


# ----------------------------------------------------------------------------- seeding


@dataclass
class Fault:
    """One seeded fault: its kind, a description, and the module it was seeded into."""

    kernel: str
    kind: str                      # "edge" | "shift"
    what: str
    module: ModuleOp
    ops: tuple[Operation, ...] = ()  # edge: (consumer,); shift: (moved alloc, target alloc)
    edge: tuple[int, int] | None = None  # edge: (producer id, consumer id)


def _instructions(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if "nkim.id" in op.attributes]


def edge_entries(module: ModuleOp) -> list[tuple[Operation, str, int]]:
    """Every removable edge: (consumer, attribute name, index in its array)."""
    found = []
    for op in _instructions(module):
        for attr in ("nkim.deps", "nkim.deps_carried"):
            arr = op.attributes.get(attr)
            if isinstance(arr, ArrayAttr):
                found += [(op, attr, i) for i in range(len(arr.data))]
    return found


def edge_count(module: ModuleOp) -> int:
    return len(edge_entries(module))


def seed_edge(name: str, text: str, rng: random.Random) -> Fault | None:
    """Remove one randomly chosen edge; None if the schedule has no cross-queue edge."""
    module = parse_module(text)
    entries = edge_entries(module)
    if not entries:
        return None
    op, attr, i = rng.choice(entries)
    items = list(op.attributes[attr].data)
    removed = items.pop(i)
    if items or attr == "nkim.deps":
        op.attributes[attr] = ArrayAttr(items)
    else:
        del op.attributes[attr]  # docs/backend.md C: deps_carried is omitted when empty
    what = (f"removed {attr} entry {_show(removed)} of {op.name} "
            f"id {op.attributes['nkim.id'].value.data} ({_line(op)})")
    producer = removed.value.data if isinstance(removed, IntegerAttr) else removed.data[0].value.data
    return Fault(name, "edge", what, module, (op,), (producer, op.attributes["nkim.id"].value.data))


def forward_implied(module: ModuleOp, producer: int, consumer: int) -> bool | None:
    """Whether the remaining edges still order ``producer`` before ``consumer`` within one
    pass of the code: a path of forward edges (``nkim.deps`` entries pointing to an earlier
    id, and in-order queues) from one to the other.  Exact for loop-free code; None for a
    backward (loop-carried) edge, which needs the loop structure to judge, and for code with
    ``scf.if`` (a path through a branch that did not run proves nothing: the wait is then
    satisfied by a stale instance, e.g. the masked versions of a ragged last tile)."""
    if producer >= consumer or any(op.name == "scf.if" for op in module.walk()):
        return None
    succ: dict[int, set[int]] = {}
    last_on_queue: dict[str, int] = {}
    for op in sorted(_instructions(module), key=lambda o: o.attributes["nkim.id"].value.data):
        me = op.attributes["nkim.id"].value.data
        q = op.attributes["nkim.queue"].data
        if q in last_on_queue:
            succ.setdefault(last_on_queue[q], set()).add(me)
        last_on_queue[q] = me
        deps = op.attributes.get("nkim.deps")
        for d in (deps.data if isinstance(deps, ArrayAttr) else ()):
            if d.value.data < me:
                succ.setdefault(d.value.data, set()).add(me)
    seen, work = {producer}, [producer]
    while work:
        for nxt in succ.get(work.pop(), ()):
            if nxt == consumer:
                return True
            if nxt < consumer and nxt not in seen:
                seen.add(nxt)
                work.append(nxt)
    return False


def _show(attr) -> str:
    if isinstance(attr, IntegerAttr):
        return str(attr.value.data)
    if isinstance(attr, ArrayAttr):
        return "[" + ", ".join(_show(a) for a in attr.data) + "]"
    return str(attr)


def _line(op: Operation) -> str:
    loc = op.location
    return f"line {loc.line.data}" if hasattr(loc, "line") else "no location"


def _name(op: AllocOp) -> str:
    a = op.attributes.get("nkim.name")
    name = a.data if hasattr(a, "data") else op.result.name_hint
    return f"'{name}'" if name else "an unnamed tile"


def _int(op: Operation, name: str, default: int = 0) -> int:
    a = op.attributes.get(name)
    return a.value.data if isinstance(a, IntegerAttr) else default


def _footprint(op: AllocOp) -> int:
    """Bytes per partition reserved for the alloc, copies of a multi-buffered one included."""
    size = bytes_per_partition(op.result)
    copies = _int(op, "nkim.copies", 1)
    return size if copies <= 1 else (copies - 1) * _int(op, "nkim.copy_stride", size) + size


def _parts(op: AllocOp) -> tuple[int, int]:
    start = _int(op, "nkim.partition")
    return start, start + shape_of(op.result)[0]


def _bytes(op: AllocOp) -> tuple[int, int]:
    off = _int(op, "nkim.offset")
    return off, off + _footprint(op)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _legal_starts(partitions: int) -> list[int]:
    """Start partitions the placement rules allow for a tensor of ``partitions`` rows."""
    if partitions > 64:
        return [0]
    if partitions > 32:
        return [0, 64]
    return [0, 32, 64, 96]


def shift_candidates(module: ModuleOp, target: str):
    """(moved, onto, new partition, new offset) for every pair of on-chip allocs of one
    memory with overlapping live ranges, disjoint today, where the moved one still fits
    (start-partition rule, capacity, PSUM bank) after being put on the other's bytes."""
    cap = {"sbuf": SBUF_BYTES[target], "psum": PSUM_BYTES}
    found = []
    for f in module.walk():
        if not isinstance(f, FuncOp):
            continue
        ranges = [r for r in live_ranges(f) if space_of(r.alloc.result) in ON_CHIP
                  and "nkim.offset" in r.alloc.attributes]
        for ra in ranges:
            for rb in ranges:
                a, b = ra.alloc, rb.alloc
                space = space_of(a.result)
                if a is b or space != space_of(b.result) or not ra.overlaps(rb):
                    continue
                if _overlap(_parts(a), _parts(b)) and _overlap(_bytes(a), _bytes(b)):
                    continue  # already sharing bytes (not ours to judge here)
                rows = shape_of(a.result)[0]
                starts = [s for s in _legal_starts(rows) if _overlap((s, s + rows), _parts(b))]
                off = _int(b, "nkim.offset")
                if not starts or off + _footprint(a) > cap[space] or rows > PARTITIONS:
                    continue
                if space == "psum" and (off % PSUM_BANK_BYTES) + bytes_per_partition(a.result) \
                        > PSUM_BANK_BYTES and off % PSUM_BANK_BYTES:
                    continue
                found.append((a, b, starts[0], off))
    return found


def seed_shift(name: str, text: str, target: str, rng: random.Random) -> Fault | None:
    """Move one random alloc onto another live one; None if no pair qualifies."""
    module = parse_module(text)
    cands = shift_candidates(module, target)
    if not cands:
        return None
    # PSUM pairs when there are any (banks, accumulation flags: rarer, so always taken)
    space = "psum" if any(space_of(c[0].result) == "psum" for c in cands) else "sbuf"
    a, b, part, off = rng.choice([c for c in cands if space_of(c[0].result) == space])
    old = (_int(a, "nkim.partition"), _int(a, "nkim.offset"))
    a.attributes["nkim.partition"] = IntegerAttr(part, i64)
    a.attributes["nkim.offset"] = IntegerAttr(off, i64)
    if "nkim.bank" in a.attributes or "nkim.bank" in b.attributes:
        a.attributes["nkim.bank"] = IntegerAttr(off // PSUM_BANK_BYTES, i64)
    what = (f"moved {space_of(a.result)} {_name(a)} ({_line(a)}) from [{old[0]}, {old[1]}] "
            f"to [{part}, {off}], onto live {_name(b)} ({_line(b)})")
    return Fault(name, "shift", what, module, (a, b))


# ----------------------------------------------------------------------------- running


def _copy(args):
    return [a.copy() for a in args]


def _run(program, args, **kw):
    """('ok', outputs) or ('error', exception) of one run on copies of ``args``."""
    try:
        return "ok", program.run(_copy(args), **kw)
    except NKIError as exc:
        return "error", exc


def _same(x, y) -> bool:
    if x[0] != "ok" or y[0] != "ok" or len(x[1]) != len(y[1]):
        return False
    return all(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
               for a, b in zip(x[1], y[1]))


LOC = re.compile(r"([^\s\"'():]+\.py):(\d+)")


@dataclass
class Outcome:
    fault: Fault
    changed: bool
    detected: bool
    unchecked: str                       # "same" | "different" | error text
    report: str = ""
    checked_other_error: str = ""        # a non-hazard error of the checked run
    source_refs: list = field(default_factory=list)


def evaluate(fault: Fault, args, baseline) -> Outcome:
    program = decode(fault.module)
    unchecked = _run(program, args, mode="queues", hazards=False)
    if unchecked[0] == "error":
        changed, how = True, f"error: {type(unchecked[1]).__name__}"
    else:
        changed = not _same(unchecked, baseline)
        how = "different" if changed else "same"
    checked = _run(program, args, mode="queues", hazards=True)
    exc = checked[1] if checked[0] == "error" else None
    detected = isinstance(exc, NKIHazardError)
    out = Outcome(fault, changed, detected, how)
    if detected:
        out.report = str(exc)
        out.source_refs = [(Path(f).name, int(n)) for f, n in LOC.findall(out.report)]
    elif exc is not None:
        out.checked_other_error = f"{type(exc).__name__}: {exc}"
    return out


# ---------------------------------------------------------------------------- fixtures


@dataclass
class Compiled:
    name: str
    text: str
    target: str
    args: tuple
    source_lines: set


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> list[Compiled]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path_factory.mktemp("nki-cache")))
        out = []
        for i, (name, kernel, make_args) in enumerate(KERNELS):
            all_args = make_args(np.random.default_rng(SEED * 1000 + i))
            ck = nki.compile(kernel, *all_args)
            args = tuple(a for a in all_args if isinstance(a, np.ndarray))
            text = ck.ir("nisa")
            module = parse_module(text)
            lines = {(Path(op.location.filename.data).name, op.location.line.data)
                     for op in _instructions(module) if hasattr(op.location, "line")}
            out.append(Compiled(name, text, ck.target, args, lines))
        return out


@pytest.fixture(scope="module")
def faults(compiled) -> list[Fault]:
    rng = random.Random(SEED)
    found = []
    for c in compiled:
        for f in (seed_edge(c.name, c.text, rng), seed_shift(c.name, c.text, c.target, rng)):
            if f is not None:
                found.append(f)
    return found


@pytest.fixture(scope="module")
def outcomes(compiled, faults) -> list[Outcome]:
    by_name = {c.name: c for c in compiled}
    results = []
    baselines = {}
    for fault in faults:
        c = by_name[fault.kernel]
        if c.name not in baselines:
            program = decode(parse_module(c.text))
            clean = _run(program, c.args, mode="queues", hazards=True)
            if clean[0] != "ok":  # a detection would say nothing about the seeded fault
                baselines[c.name] = None
                continue
            baselines[c.name] = _run(program, c.args, mode="queues", hazards=False)
        if baselines[c.name] is not None:
            results.append(evaluate(fault, c.args, baselines[c.name]))
    return results


# ------------------------------------------------------------------------------- tests


def test_seeded_kernels_compile_and_seed(compiled, faults):
    """>= 20 kernels compile; every kernel with >= 2 queues gets an edge fault, and the
    seeding did what it says (one edge fewer; the moved buffer overlaps a live one)."""
    assert len(compiled) >= 20
    by_name = {c.name: c for c in compiled}
    kinds = {k: [f for f in faults if f.kind == k] for k in KINDS}
    assert len(faults) >= 20, f"only {len(faults)} faults seeded"
    assert len({f.kernel for f in faults}) >= 20
    assert len(kinds["edge"]) >= 20 and len(kinds["shift"]) >= 10, {k: len(v) for k, v in kinds.items()}
    for f in kinds["edge"]:
        assert edge_count(f.module) == edge_count(parse_module(by_name[f.kernel].text)) - 1
    for f in kinds["shift"]:
        a, b = f.ops
        assert _overlap(_parts(a), _parts(b)) and _overlap(_bytes(a), _bytes(b)), f.what
    # the same seed seeds the same faults
    rng = random.Random(SEED)
    again = []
    for c in compiled:
        again += [seed_edge(c.name, c.text, rng), seed_shift(c.name, c.text, c.target, rng)]
    assert [f.what for f in again if f is not None] == [f.what for f in faults]


def test_seeded_kernels_run_in_program_order(compiled):
    """The unmodified modules run (program order) -- the seeds start from working kernels."""
    for c in compiled:
        status, outs = _run(decode(parse_module(c.text)), c.args, mode="program-order",
                            hazards=False)
        assert status == "ok", f"{c.name}: {outs}"


def test_seeded_clean_schedules_are_hazard_free(compiled):
    """Unmodified modules: no hazard on the queues, and the queue run gives the program-order
    result bit for bit (and twice the same: the interleaving is deterministic)."""
    bad = []
    for c in compiled:
        program = decode(parse_module(c.text))
        ref = _run(program, c.args, mode="program-order")
        q1 = _run(program, c.args, mode="queues", hazards=False)
        q2 = _run(program, c.args, mode="queues", hazards=False)
        checked = _run(program, c.args, mode="queues", hazards=True)
        if checked[0] != "ok":
            bad.append(f"{c.name}: hazard on the unmodified module: {checked[1]}")
        elif not (_same(ref, q1) and _same(q1, q2) and _same(ref, checked)):
            bad.append(f"{c.name}: the queue runs differ from the program-order run")
    assert not bad, "\n".join(bad)


def test_seeded_faults_detected(compiled, outcomes):
    """Every fault that changes behaviour is detected; every shifted buffer is detected."""
    n_kernels = len({o.fault.kernel for o in outcomes})
    changed = [o for o in outcomes if o.changed]
    detected = [o for o in outcomes if o.detected]
    missed = [o for o in changed if not o.detected]
    benign = [o for o in outcomes if o.fault.kind == "edge" and not o.changed and not o.detected]
    implied = {id(o): forward_implied(o.fault.module, *o.fault.edge) for o in outcomes
               if o.fault.edge}
    shown = [o for o in benign if implied[id(o)]]
    carried = [o for o in benign if implied[id(o)] is None]
    # an edge the remaining forward edges imply cannot leave a race: no report, no change
    wrong = [o for o in outcomes if implied.get(id(o)) and (o.detected or o.changed)]
    shift_missed = [o for o in outcomes if o.fault.kind == "shift" and not o.detected]
    by_kind = {k: sum(o.fault.kind == k for o in outcomes) for k in KINDS}
    summary = (f"seeded faults: {n_kernels} kernels, {len(outcomes)} faults "
               f"({by_kind['edge']} edge, {by_kind['shift']} shift), {len(changed)} changed "
               f"behaviour, {len(detected)} detected, {len(missed)} missed; "
               f"{len(benign)} removed edges implied by others (unchanged, undetected: "
               f"{len(shown)} by a forward path, {len(carried)} loop-carried or under scf.if)")
    print("\n" + summary)
    for o in outcomes:
        flag = ("MISSED " if o.changed and not o.detected else
                "detected" if o.detected else "benign  ")
        imp = implied.get(id(o), "-")
        print(f"  {flag} {o.fault.kernel:<20} {o.fault.kind:<5} {o.unchecked:<10} implied={imp!s:<5} {o.fault.what}"
              + (f"  [checked run: {o.checked_other_error[:120]}]" if o.checked_other_error else ""))
    assert n_kernels >= 20, summary
    assert not missed, summary + "\nmissed:\n" + "\n".join(
        f"  {o.fault.kernel}: {o.fault.what} ({o.unchecked})" for o in missed)
    assert not shift_missed, summary + "\nshifted buffers not detected:\n" + "\n".join(
        f"  {o.fault.kernel}: {o.fault.what}" for o in shift_missed)
    assert not wrong, summary + "\nimplied edges reported or changing results:\n" + "\n".join(
        f"  {o.fault.kernel}: {o.fault.what} ({o.unchecked}) {o.report[:200]}" for o in wrong)
    assert len(benign) == len(shown) + len(carried), summary + "\nforward edges neither implied " \
        "nor detected:\n" + "\n".join(f"  {o.fault.kernel}: {o.fault.what}" for o in benign
                                       if implied[id(o)] is False)
    assert changed, summary + " (no fault changed behaviour: the queue interleaving is not adversarial)"


def test_seeded_fault_reports_name_both_source_lines(compiled, outcomes):
    """Each hazard report names >= 2 file:line positions, all of them lines of the kernel's
    instructions (or allocs), and quotes a source line."""
    lines = {c.name: c.source_lines for c in compiled}
    for o in outcomes:
        if not o.detected:
            continue
        mod_lines = lines[o.fault.kernel] | {
            (Path(op.location.filename.data).name, op.location.line.data)
            for op in o.fault.module.walk()
            if isinstance(op, AllocOp) and hasattr(op.location, "line")}
        refs = o.source_refs
        assert len(refs) >= 2, f"{o.fault.kernel}: {o.fault.what}\nreport:\n{o.report}"
        assert all(r in mod_lines for r in refs), f"{o.fault.kernel}: {refs}\n{o.report}"
        texts = [_source_text(o.fault.module, r) for r in refs]
        assert any(t and t in o.report for t in texts), f"{o.fault.kernel}: no source text\n{o.report}"


def _source_text(module: ModuleOp, ref: tuple[str, int]) -> str:
    import linecache
    for op in module.walk():
        loc = op.location
        if hasattr(loc, "line") and (Path(loc.filename.data).name, loc.line.data) == ref:
            return linecache.getline(loc.filename.data, loc.line.data).strip()
    return ""
