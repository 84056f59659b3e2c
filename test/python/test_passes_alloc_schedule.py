"""Tests of nisa-allocate, nisa-schedule, their helpers and the nki-opt driver.

Besides examples, two properties are checked on random straight-line programs with an
oracle written independently of the passes:
- placement: tensors live at the same time never share a byte, and every placement
  obeys alignment, capacity and (PSUM) bank rules;
- schedule: every pair of conflicting instructions on different queues is ordered by
  the dependency edges plus in-order queues (no race is left).
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from nki_mlir.dialects import make_context
from nki_mlir.dialects.nisa import AllocOp, NisaInstruction
from nki_mlir.errors import NKIAllocationError, NKIError
from nki_mlir.passes import allocate as alloc_mod
from nki_mlir.passes.allocate import Arena, NisaAllocate, arenas
from nki_mlir.dialects.effects import accesses, base_buffer, bytes_per_partition
from nki_mlir.passes.liveness import live_ranges
from nki_mlir.passes.schedule import NisaSchedule

ROOT = Path(__file__).resolve().parents[2]

SB = "#nisa.mem<sbuf>"
PS = "#nisa.mem<psum>"
HBM = "#nisa.mem<shared_hbm>"


def parse(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def run(module: ModuleOp, *passes) -> ModuleOp:
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()
    return module


def allocs(module: ModuleOp) -> dict[str, AllocOp]:
    return {op.result.name_hint: op for op in module.walk() if isinstance(op, AllocOp)}


def placement(op: AllocOp) -> tuple[int, int]:
    return op.attributes["nkim.partition"].value.data, op.attributes["nkim.offset"].value.data


def instructions(module: ModuleOp) -> list[NisaInstruction]:
    return [op for op in module.walk() if isinstance(op, NisaInstruction)]


def sched(op) -> tuple[int, str, list[int]]:
    return (op.attributes["nkim.id"].value.data, op.attributes["nkim.queue"].data,
            [d.value.data for d in op.attributes["nkim.deps"].data])


# ------------------------------------------------------------------------------ IR


LOOP_KERNEL = f"""
module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @k(%a: memref<256x512xf32, {HBM}>, %out: memref<256x512xf32, {HBM}>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %x = nisa.alloc : memref<128x512xf32, {SB}>
    nisa.memset(dst=memref<128x512xf32, {SB}> %x, value=f32 %zero) engine=vector
    %p = nisa.alloc : memref<128x512xf32, {PS}>
    scf.for %i = %c0 to %c2 step %c1 {{
      %r = arith.muli %i, %c128 : index
      %u = nisa.alloc : memref<128x512xf32, {SB}>
      %av = memref.subview %a[%r, 0] [128, 512] [1, 1] : memref<256x512xf32, {HBM}> to memref<128x512xf32, strided<[512, 1], offset: ?>, {HBM}>
      nisa.dma_copy(dst=memref<128x512xf32, {SB}> %u, src=memref<128x512xf32, strided<[512, 1], offset: ?>, {HBM}> %av) engine=dma
      %xv = memref.subview %x[0, 0] [128, 512] [1, 1] : memref<128x512xf32, {SB}> to memref<128x512xf32, strided<[512, 1]>, {SB}>
      nisa.tensor_tensor_arith(dst=memref<128x512xf32, {SB}> %u, lhs=memref<128x512xf32, {SB}> %u, rhs=memref<128x512xf32, strided<[512, 1]>, {SB}> %xv, op=add) engine=vector
      %t = nisa.alloc : memref<128x512xf32, {SB}>
      nisa.activation(dst=memref<128x512xf32, {SB}> %t, src=memref<128x512xf32, {SB}> %u, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar
      %ov = memref.subview %out[%r, 0] [128, 512] [1, 1] : memref<256x512xf32, {HBM}> to memref<128x512xf32, strided<[512, 1], offset: ?>, {HBM}>
      nisa.dma_copy(dst=memref<128x512xf32, strided<[512, 1], offset: ?>, {HBM}> %ov, src=memref<128x512xf32, {SB}> %t) engine=dma
    }} {{nki.range = "affine"}}
    %z = nisa.alloc : memref<128x512xf32, {SB}>
    nisa.memset(dst=memref<128x512xf32, {SB}> %z, value=f32 %zero) engine=gpsimd
    func.return
  }}
}}
"""


# ------------------------------------------------------------------------ liveness


def test_live_ranges_extend_over_loops_and_views():
    module = parse(LOOP_KERNEL)
    func = next(op for op in module.walk() if op.name == "func.func")
    ranges = {lr.alloc.result.name_hint: lr for lr in live_ranges(func)}
    loop = next(op for op in module.walk() if op.name == "scf.for")
    # x is used (through a subview) inside the loop: live to the end of the loop
    assert ranges["x"].end >= ranges["t"].end
    assert ranges["x"].overlaps(ranges["t"])
    # body tensors: inside the body; z after the loop overlaps none of them
    assert ranges["u"].loop is loop and ranges["t"].loop is loop
    assert not ranges["z"].overlaps(ranges["u"]) and not ranges["z"].overlaps(ranges["x"])
    # p is never used: live only at its definition
    assert ranges["p"].start == ranges["p"].end
    assert all(lr.copies == 1 for lr in ranges.values())


def test_base_buffer_follows_view_chains():
    module = parse(LOOP_KERNEL)
    by_name = allocs(module)
    add = next(op for op in module.walk() if op.name == "nisa.tensor_tensor_arith")
    acc = {a.role: a for a in accesses(add)}
    assert acc["rhs"].base is by_name["x"].result and not acc["rhs"].is_write
    assert acc["dst"].is_write and acc["dst"].base is by_name["u"].result
    assert base_buffer(by_name["x"].result) is by_name["x"].result


def test_bytes_per_partition():
    module = parse(f"""func.func @f() {{
      %a = nisa.alloc : memref<128x4x64xbf16, {SB}>
      %b = nisa.alloc : memref<32x1xf32, {PS}>
      func.return }}""")
    a, b = allocs(module)["a"], allocs(module)["b"]
    assert bytes_per_partition(a.result) == 512
    assert bytes_per_partition(b.result) == 4


# ---------------------------------------------------------------------- placement


def test_arena_psum_bank_rules():
    psum = arenas("trn2")["psum"]
    assert psum.capacity == 16384 and psum.bank == 2048
    assert psum.legal_offset(0, 2048, 4) == 0
    assert psum.legal_offset(2, 100, 4) == 4                # 4-byte alignment
    assert psum.legal_offset(2000, 100, 4) == 2048          # would straddle banks 0 and 1
    assert psum.legal_offset(100, 4096, 4) == 2048          # > one bank: bank boundary
    sbuf = arenas("trn1")["sbuf"]
    assert sbuf.capacity == 180224 and sbuf.legal_offset(65, 8, 64) == 128
    assert {t: arenas(t)["sbuf"].capacity for t in ("trn1", "trn2", "trn3")} == \
        {"trn1": 180224, "trn2": 212984, "trn3": 245752}


def copies(op: AllocOp) -> tuple[int, int] | None:
    """(nkim.copies, nkim.copy_stride) of a multi-buffered alloc, else None."""
    if "nkim.copies" not in op.attributes:
        assert op.copy_index is None and "nkim.copy_stride" not in op.attributes
        return None
    assert op.copy_index is not None
    return op.attributes["nkim.copies"].value.data, op.attributes["nkim.copy_stride"].value.data


def test_loop_kernel_placement():
    module = run(parse(LOOP_KERNEL), NisaAllocate())
    by_name = allocs(module)
    assert placement(by_name["x"]) == (0, 0)
    # u and t: affine_range body, 2 trips -> 2 copies, reserved over the whole loop
    assert placement(by_name["u"]) == (0, 2048) and copies(by_name["u"]) == (2, 2048)
    assert placement(by_name["t"]) == (0, 6144) and copies(by_name["t"]) == (2, 2048)
    assert placement(by_name["z"]) == (0, 0)        # everything else dead
    assert copies(by_name["x"]) is None and copies(by_name["z"]) is None
    assert by_name["p"].attributes["nkim.bank"].value.data == 0
    assert by_name["x"].alignment.value.data == 64 and by_name["p"].alignment.value.data == 4
    assert module.attributes["nkim.sbuf_peak_bytes"].value.data == 10240
    assert module.attributes["nkim.psum_peak_bytes"].value.data == 2048


def test_loop_kernel_placement_without_multibuffering():
    module = run(parse(LOOP_KERNEL), NisaAllocate(max_copies=1))
    by_name = allocs(module)
    assert placement(by_name["u"]) == (0, 2048)
    assert placement(by_name["t"]) == (0, 4096)     # x and u still live
    assert all(copies(op) is None for op in by_name.values())
    assert module.attributes["nkim.sbuf_peak_bytes"].value.data == 6144
    with pytest.raises(NKIError, match="max-copies must be 1..4, got 0"):
        run(parse(LOOP_KERNEL), NisaAllocate(max_copies=0))


def test_allocate_runs_again_on_its_output():
    once = run(parse(LOOP_KERNEL), NisaAllocate())
    text = str(once)
    twice = run(parse(text), NisaAllocate())
    assert {n: (placement(o), copies(o)) for n, o in allocs(twice).items() if "nkim.offset" in o.attributes} \
        == {n: (placement(o), copies(o)) for n, o in allocs(once).items() if "nkim.offset" in o.attributes}
    off = run(parse(text), NisaAllocate(max_copies=1))
    assert all(copies(op) is None for op in allocs(off).values())


def test_target_option_and_module_target():
    text = f"""module attributes {{nisa.target = #nisa.target<trn3>}} {{
      func.func @f() {{
        %a = nisa.alloc : memref<128x60000xf32, {SB}>
        func.return }} }}"""
    run(parse(text), NisaAllocate())                          # 240000 <= 245752 on trn3
    with pytest.raises(NKIAllocationError, match="SBUF on trn2 has 212984 bytes per partition"):
        run(parse(text), NisaAllocate(target="trn2"))
    with pytest.raises(NKIError, match="unknown target 'trn7'"):
        run(parse(text), NisaAllocate(target="trn7"))


def test_overflow_error_is_located_and_lists_tensors():
    text = f"""func.func @f() {{
      %a = nisa.alloc {{nkim.name = "big"}} : memref<128x40000xf32, {SB}> loc("kern.py":3:4)
      %b = nisa.alloc {{nkim.name = "bigger"}} : memref<128x50000xf32, {SB}> loc("kern.py":4:4)
      %c = nisa.alloc : memref<128x8xf32, {SB}> loc("kern.py":5:4)
      nisa.release %a : memref<128x40000xf32, {SB}>
      nisa.release %b : memref<128x50000xf32, {SB}>
      nisa.release %c : memref<128x8xf32, {SB}>
      func.return }}"""
    with pytest.raises(NKIAllocationError) as info:
        run(parse(text), NisaAllocate())
    err = info.value
    assert (err.loc.file, err.loc.line) == ("kern.py", 4)
    lines = str(err).splitlines()
    assert "cannot place tensor 'bigger' in SBUF" in lines[0]
    assert "need 360000 bytes per partition" in lines[0] and "212984" in lines[0]
    assert lines[2].strip().startswith("'bigger' [128, 50000] float32: 200000 bytes")
    assert lines[3].strip().startswith("'big' [128, 40000] float32: 160000 bytes")
    assert lines[3].endswith("kern.py:3")


def test_direct_allocation_honoured_and_checked():
    ok = f"""func.func @f() {{
      %a = nisa.alloc {{nkim.address = [32, 100]}} : memref<32x8xf32, {SB}>
      %b = nisa.alloc : memref<128x8xf32, {SB}>
      %c = nisa.alloc {{nkim.address = [64, 0]}} : memref<64x8xf32, {SB}>
      nisa.release %a : memref<32x8xf32, {SB}>
      nisa.release %b : memref<128x8xf32, {SB}>
      nisa.release %c : memref<64x8xf32, {SB}>
      func.return }}"""
    by_name = allocs(run(parse(ok), NisaAllocate()))
    assert placement(by_name["a"]) == (32, 100)
    assert placement(by_name["c"]) == (64, 0)
    # b (32 bytes) spans all partitions: it avoids c's bytes [0, 32) and a's [100, 132);
    # best fit takes the small gap between them at the next 64-byte boundary
    assert placement(by_name["b"]) == (0, 64)
    bad = ok.replace("[64, 0]", "[0, 120]")     # partitions 0..63 and bytes [120, 152)
    with pytest.raises(NKIAllocationError, match=r"address=\(0, 120\) overlaps tensor 'a'"):
        run(parse(bad), NisaAllocate())


def test_pinned_tensors_with_disjoint_lifetimes_may_share_bytes():
    text = f"""func.func @f() {{
      %a = nisa.alloc {{nkim.address = [0, 0]}} : memref<128x8xf32, {SB}>
      nisa.release %a : memref<128x8xf32, {SB}>
      %b = nisa.alloc {{nkim.address = [0, 0]}} : memref<128x8xf32, {SB}>
      nisa.release %b : memref<128x8xf32, {SB}>
      func.return }}"""
    run(parse(text), NisaAllocate())


# ----------------------------------------------------------------------- schedule


def carried(op) -> list[list[int]]:
    attr = op.attributes.get("nkim.deps_carried")
    return [[x.value.data for x in t.data] for t in attr.data] if attr is not None else []


def test_loop_kernel_schedule():
    module = run(parse(LOOP_KERNEL), NisaAllocate(), NisaSchedule())
    ops = instructions(module)
    got = [sched(op) for op in ops]
    assert got == [
        (0, "vector", []),          # memset x
        (1, "dma0", []),            # dma u: a load (dma0); u has 2 copies: see deps_carried
        (2, "vector", [1]),         # add u += x: RAW u
        (3, "scalar", [2]),         # exp t <- u: RAW u from both writers (2 waited for 1)
        (4, "dma2", [3]),           # dma out <- t: a store (dma2)
        (5, "gpsimd", [2]),         # memset z: z reuses x's bytes; x's last user (vector) is 2
    ]
    # u and t rotate over 2 copies and the loop runs twice: no iteration reuses the bytes of
    # another, so there is no carried wait (a distance the loop never reaches is no edge)
    assert [carried(op) for op in ops] == [[], [], [], [], [], []]
    # with one copy (max-copies=1) iteration 1 reuses iteration 0's bytes: distance-1 waits
    module = run(parse(LOOP_KERNEL), NisaAllocate(max_copies=1), NisaSchedule())
    assert [sched(op)[2] for op in instructions(module)][1] == [3]  # load of u after exp(i-1)
    assert module.attributes["nkim.schedule"].data == "list"
    module = run(parse(LOOP_KERNEL), NisaAllocate(), NisaSchedule(mode="program-order"))
    assert module.attributes["nkim.schedule"].data == "in-order"


def test_schedule_rejects_unknown_mode():
    with pytest.raises(NKIError, match="unknown mode 'greedy'"):
        run(parse(LOOP_KERNEL), NisaSchedule(mode="greedy"))


# ----------------------------------------------------- properties (random programs)

FREE = (16, 100, 512)
ENGINES = ("vector", "scalar", "gpsimd")


def random_program(rng: random.Random, n_steps: int = 30) -> str:
    """A straight-line nisa function: allocs, DMAs, copies, memsets, releases."""
    args = ", ".join(f"%h{f}: memref<128x{f}xf32, {HBM}>" for f in FREE)
    body, live, n = [], [], 0
    for _ in range(n_steps):
        choice = rng.random()
        if choice < 0.3 or not live:
            f, space = rng.choice(FREE), rng.choice(("sbuf", "sbuf", "psum"))
            name = f"t{n}"
            n += 1
            body.append(f"%{name} = nisa.alloc : memref<128x{f}xf32, #nisa.mem<{space}>>")
            if space == "sbuf":
                body.append(f"nisa.dma_copy(dst=memref<128x{f}xf32, {SB}> %{name}, "
                            f"src=memref<128x{f}xf32, {HBM}> %h{f}) engine=dma")
            else:
                body.append(f"nisa.memset(dst=memref<128x{f}xf32, {PS}> %{name}, value=f32 %zero) "
                            f"engine=vector")
            live.append((name, f, space))
        elif choice < 0.75:
            dst = rng.choice(live)
            srcs = [t for t in live if t[1] == dst[1] and t != dst and not (t[2] == dst[2] == "psum")]
            if not srcs:
                continue
            src = rng.choice(srcs)
            eng = rng.choice(ENGINES if "psum" not in (dst[2], src[2]) else ("vector", "scalar"))
            body.append(f"nisa.tensor_copy(dst=memref<128x{dst[1]}xf32, #nisa.mem<{dst[2]}>> %{dst[0]}, "
                        f"src=memref<128x{src[1]}xf32, #nisa.mem<{src[2]}>> %{src[0]}) engine={eng}")
        elif choice < 0.85:
            t = rng.choice([t for t in live if t[2] == "sbuf"] or [None])
            if t is not None:
                body.append(f"nisa.dma_copy(dst=memref<128x{t[1]}xf32, {HBM}> %h{t[1]}, "
                            f"src=memref<128x{t[1]}xf32, {SB}> %{t[0]}) engine=dma")
        else:
            t = live.pop(rng.randrange(len(live)))
            body.append(f"nisa.release %{t[0]} : memref<128x{t[1]}xf32, #nisa.mem<{t[2]}>>")
    lines = "\n    ".join(body)
    return f"""func.func @r({args}) {{
    %zero = arith.constant 0.0 : f32
    {lines}
    func.return
  }}"""


def oracle_live_ranges(module: ModuleOp) -> dict[AllocOp, tuple[int, int]]:
    """Straight-line code: [position of the alloc, position of its last use]."""
    ops = list(module.walk())
    pos = {op: i for i, op in enumerate(ops)}
    ranges = {}
    for op in ops:
        if isinstance(op, AllocOp):
            uses = [pos[u.operation] for u in op.result.uses]
            ranges[op] = (pos[op], max(uses, default=pos[op]))
    return ranges


def rect(op: AllocOp) -> tuple[str, int, int, int, int]:
    p, off = placement(op)
    return (op.result.type.memory_space.space.data, p, p + op.result.type.get_shape()[0],
            off, off + bytes_per_partition(op.result))


def rects_overlap(a, b) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_placement_and_schedule_are_sound(seed):
    rng = random.Random(seed)
    module = run(parse(random_program(rng)), NisaAllocate(), NisaSchedule())
    ranges = oracle_live_ranges(module)
    sbuf = Arena("sbuf", alloc_mod.SBUF_BYTES["trn2"], 64)
    # placement
    for op, (s, e) in ranges.items():
        space, p0, p1, lo, hi = rect(op)
        assert p0 == 0 and hi <= (sbuf.capacity if space == "sbuf" else 16384)
        if space == "sbuf":
            assert lo % 64 == 0
        else:
            assert lo % 4 == 0
            assert hi - lo > 2048 and lo % 2048 == 0 or lo // 2048 == (hi - 1) // 2048
        for other, (s2, e2) in ranges.items():
            if other is not op and s <= e2 and s2 <= e:
                assert not rects_overlap(rect(op), rect(other)), (op, other)
    # schedule: conflicting instructions on different queues are ordered
    instrs = instructions(module)
    info = [sched(op) for op in instrs]
    assert [i for i, _, _ in info] == list(range(len(instrs)))
    before = [set() for _ in instrs]       # transitive happens-before
    last_on_queue: dict[str, int] = {}
    for i, (_, queue, deps) in enumerate(info):
        preds = set(deps) | ({last_on_queue[queue]} if queue in last_on_queue else set())
        for d in preds:
            assert d < i
            before[i] |= before[d] | {d}
        last_on_queue[queue] = i

    def touched(op):
        out = []
        for a in accesses(op):
            base = a.base
            r = rect(base.op) if isinstance(base.owner, AllocOp) else None
            out.append((base, r, a.is_write))
        return out

    for i, op in enumerate(instrs):
        for j in range(i):
            if info[j][1] == info[i][1]:
                continue
            for b1, r1, w1 in touched(op):
                for b2, r2, w2 in touched(instrs[j]):
                    alias = b1 is b2 or (r1 is not None and r2 is not None and rects_overlap(r1, r2))
                    if alias and (w1 or w2):
                        assert j in before[i], f"race: {j} -> {i} (seed {seed})"


# ------------------------------------------------------------------------- nki-opt


def nki_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nki_mlir.tools.nki_opt", *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_nki_opt_prints_schedule_and_placement(tmp_path):
    src = tmp_path / "k.mlir"
    src.write_text(LOOP_KERNEL)
    res = nki_opt(str(src), "-p", "nisa-allocate{target=trn2},nisa-schedule")
    assert res.returncode == 0, res.stderr
    assert 'nkim.queue = "scalar"' in res.stdout and "nkim.offset = 6144 : i64" in res.stdout
    assert "copy(%i)" in res.stdout and "nkim.copies = 2 : i64" in res.stdout


def test_nki_opt_reports_nki_errors_without_traceback(tmp_path):
    src = tmp_path / "k.mlir"
    src.write_text(f"""func.func @f() {{
      %a = nisa.alloc {{nkim.name = "huge"}} : memref<128x60000xf32, {SB}> loc("kern.py":7:3)
      func.return }}""")
    res = nki_opt(str(src), "-p", "nisa-allocate")
    assert res.returncode == 1
    assert res.stderr.startswith("kern.py:7:3: out of memory: cannot place tensor 'huge'")
    assert "Traceback" not in res.stderr
    diag = nki_opt(str(src), "-p", "nisa-allocate", "--verify-diagnostics")
    assert diag.returncode == 0 and "cannot place tensor 'huge'" in diag.stdout


def test_nki_opt_version_and_registry():
    res = nki_opt("--version")
    assert res.returncode == 0
    assert res.stdout.startswith("nki-opt (nki-mlir ") and ", xdsl 0.74.0)" in res.stdout
    from nki_mlir.tools.nki_opt import NkiOptMain
    main = NkiOptMain(args=[])
    assert {"nisa-allocate", "nisa-schedule", "canonicalize"} <= set(main.available_passes)
    assert {"nki", "nisa", "arith"} <= set(main.ctx.registered_dialect_names)
