"""Multi-buffering in nisa-allocate and the memory report.

The property test runs random loop nests through nisa-allocate and checks the placement
with an oracle that knows nothing of the pass: it executes the function's loops (a
small evaluator of ``scf.for`` and the index ``arith`` ops), so every executed alloc gets
the bytes its ``copy(%slot)`` operand and ``nkim.*`` attributes give, and then checks that
- the slot of an alloc's n-th execution is n (the linear iteration number);
- two tensor instances that may be in flight at the same time never share a byte, where
  a rotating instance is in flight from its alloc until the alloc of the instance that
  takes the same copy again (or until its loop ends), so consecutive iterations can
  overlap;
- every copy obeys alignment, capacity and PSUM bank rules.
"""
from __future__ import annotations

import json
import random

import pytest
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Operation, OpResult
from xdsl.parser import Parser

from nki_mlir.dialects import make_context
from nki_mlir.dialects.nisa import AllocOp
from nki_mlir.errors import NKIAllocationError
from nki_mlir.passes import memory_report, multibuffer
from nki_mlir.passes.allocate import SBUF_BYTES, NisaAllocate
from nki_mlir.dialects.effects import VIEW_OPS, bytes_per_partition
from nki_mlir.passes.liveness import live_ranges

SB = "#nisa.mem<sbuf>"
PS = "#nisa.mem<psum>"


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def allocate(text: str, **options) -> ModuleOp:
    module = parse(text)
    NisaAllocate(**options).apply(make_context(), module)
    module.verify()
    return module


def allocs(module: ModuleOp) -> dict[str, AllocOp]:
    return {op.result.name_hint: op for op in module.walk() if isinstance(op, AllocOp)}


def attr(op: Operation, name: str) -> int | None:
    a = op.attributes.get(name)
    return a.value.data if isinstance(a, IntegerAttr) else None


def copies(op: AllocOp) -> int:
    return attr(op, "nkim.copies") or 1


def loop_kernel(free: int, trips: int, dtype: str = "f32", range_: str = "affine",
                extra: str = "") -> str:
    """One body tensor %u of [128, free] in a loop of ``trips`` trips."""
    t = f"memref<128x{free}x{dtype}, {SB}>"
    return f"""module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @k() {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cn = arith.constant {trips} : index
    %zero = arith.constant 0.0 : f32
    {extra}
    scf.for %i = %c0 to %cn step %c1 {{
      %u = nisa.alloc {{nkim.name = "u"}} : {t} loc("k.py":5:6)
      nisa.memset(dst={t} %u, value=f32 %zero) engine=vector
    }} {{nki.range = "{range_}"}}
    func.return
  }}
}}"""


# ---------------------------------------------------------------------------- policy


@pytest.mark.parametrize("trips, option, expected", [
    (2, 4, 2), (3, 4, 3), (8, 4, 4), (8, 2, 2), (8, 3, 3), (8, 1, 1), (1, 4, 1)])
def test_copies_are_bounded_by_trips_and_option(trips, option, expected):
    u = allocs(allocate(loop_kernel(512, trips), max_copies=option))["u"]
    assert copies(u) == expected
    assert (u.copy_index is not None) == (expected > 1)
    if expected > 1:
        assert attr(u, "nkim.copy_stride") == 2048


def test_sequential_range_bodies_are_not_multibuffered():
    u = allocs(allocate(loop_kernel(512, 4, range_="sequential")))["u"]
    assert copies(u) == 1 and u.copy_index is None


def test_stride_rounds_up_to_the_alignment():
    u = allocs(allocate(loop_kernel(10, 4)))["u"]          # 40 bytes, 64-byte aligned
    assert (copies(u), attr(u, "nkim.copy_stride")) == (4, 64)


def test_capacity_fallback_from_two_copies_to_one():
    # [128, 30000] f32 = 120000 bytes: 2 copies need 240000 > 212984 (trn2), fit on trn3
    text = loop_kernel(30000, 2)
    u = allocs(allocate(text))["u"]
    assert copies(u) == 1 and u.copy_index is None and attr(u, "nkim.offset") == 0
    assert copies(allocs(allocate(text, target="trn3"))["u"]) == 2


def test_fallback_gives_up_copies_of_the_largest_tensor_first():
    # a: 60000 bytes, b: 30000 bytes, 4 trips.  a 4 -> 3 (fits alone); with b (4 copies,
    # 120000) a goes 3 -> 2 -> 1 (largest footprint first; ties: program order).
    body = f"""
      %a = nisa.alloc {{nkim.name = "a"}} : memref<128x15000xf32, {SB}>
      %b = nisa.alloc {{nkim.name = "b"}} : memref<128x7500xf32, {SB}>
      nisa.memset(dst=memref<128x15000xf32, {SB}> %a, value=f32 %zero) engine=vector
      nisa.memset(dst=memref<128x7500xf32, {SB}> %b, value=f32 %zero) engine=vector"""
    text = loop_kernel(16, 4).replace('nisa.memset(dst=memref<128x16xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector',
                                      'nisa.memset(dst=memref<128x16xf32, #nisa.mem<sbuf>> %u, value=f32 %zero) engine=vector' + body)
    by = allocs(allocate(text))
    assert (copies(by["a"]), copies(by["b"]), copies(by["u"])) == (1, 4, 4)


def test_a_dma_destination_gives_up_its_second_copy_last():
    # ld (a DMA destination) and a (written by VectorE): 60000 bytes each, 4 trips on trn2
    # (212984 bytes).  Both come down 4 -> 3 -> 2 (largest first); two copies of both need
    # 240000, and then a loses its second copy although ld comes first in program order
    # (the load keeps the copy that lets it run an iteration ahead).
    t = f"memref<128x15000xf32, {SB}>"
    h = "memref<128x15000xf32, #nisa.mem<shared_hbm>>"
    text = f"""module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @k(%x: {h}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cn = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    scf.for %i = %c0 to %cn step %c1 {{
      %ld = nisa.alloc {{nkim.name = "ld"}} : {t}
      nisa.dma_copy(dst={t} %ld, src={h} %x, oob_is_err=true) engine=dma
      %a = nisa.alloc {{nkim.name = "a"}} : {t}
      nisa.tensor_copy(dst={t} %a, src={t} %ld) engine=vector
    }} {{nki.range = "affine"}}
    func.return
  }}
}}"""
    by = allocs(allocate(text))
    assert (copies(by["ld"]), copies(by["a"])) == (2, 1)
    # without the DMA the same two tensors tie, and program order decides: the first loses
    by = allocs(allocate(text.replace(f"nisa.dma_copy(dst={t} %ld, src={h} %x, oob_is_err=true) engine=dma",
                                      f"nisa.memset(dst={t} %ld, value=f32 %zero) engine=vector")))
    assert (copies(by["ld"]), copies(by["a"])) == (1, 2)


def test_overflow_is_reported_only_when_one_copy_does_not_fit_either():
    # u (2 copies would be 2 x 120000) falls back to 1; with x (100000 bytes) live across
    # the loop even one copy does not fit: the message lists the single-copy sizes (with
    # spilling off; with it on, x is kept in HBM over the loop: test_spill.py).
    extra = f"""%x = nisa.alloc {{nkim.name = "x"}} : memref<128x25000xf32, {SB}> loc("k.py":3:4)
    nisa.memset(dst=memref<128x25000xf32, {SB}> %x, value=f32 %zero) engine=vector"""
    text = loop_kernel(30000, 2, extra=extra).replace(
        "    func.return", f"    nisa.release %x : memref<128x25000xf32, {SB}>\n    func.return")
    with pytest.raises(NKIAllocationError) as info:
        allocate(text, spill=False)
    lines = str(info.value).splitlines()
    assert "cannot place tensor 'u' in SBUF" in lines[0] and "need 220000 bytes" in lines[0]
    assert lines[2].strip() == "'u' [128, 30000] float32: 120000 bytes per partition at k.py:5"
    assert lines[3].strip() == "'x' [128, 25000] float32: 100000 bytes per partition at k.py:3"
    assert (info.value.loc.file, info.value.loc.line) == ("k.py", 5)


def test_rotating_copies_avoid_direct_allocations():
    extra = f"""%pin = nisa.alloc {{nkim.name = "pin", nkim.address = [0, 2048]}} : memref<128x512xf32, {SB}>
    nisa.memset(dst=memref<128x512xf32, {SB}> %pin, value=f32 %zero) engine=vector"""
    text = loop_kernel(512, 2, extra=extra).replace(
        "    func.return", f"    nisa.release %pin : memref<128x512xf32, {SB}>\n    func.return")
    by = allocs(allocate(text))
    # u needs 2 x 2048 bytes: [0, 2048) is too small, so it goes after pin
    assert (attr(by["pin"], "nkim.offset"), attr(by["u"], "nkim.offset"), copies(by["u"])) == (2048, 4096, 2)


def test_liveness_rotated_range_covers_the_loop():
    module = parse(loop_kernel(512, 2))
    func = next(op for op in module.walk() if op.name == "func.func")
    (lr,) = live_ranges(func)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    assert lr.copies == 1 and lr.loop is loop and lr.body is not None
    rot = lr.rotated(3)
    assert rot.copies == 3 and (rot.start, rot.end) == lr.body
    assert lr.rotated(1) == lr


def test_copy_stride_rules():
    assert multibuffer.copy_stride(100, 64, None) == (128, 64)
    assert multibuffer.copy_stride(1200, 4, 2048) == (2048, 2048)
    assert multibuffer.copy_stride(300, 4, 2048) == (512, 512)
    assert multibuffer.copy_stride(4, 4, 2048) == (4, 4)
    assert multibuffer.copy_stride(3000, 4, 2048) == (4096, 2048)
    assert multibuffer.copy_stride(100, 3000, 2048) is None      # alignment > a bank


# ------------------------------------------------------------------- the slot values


NEST = f"""module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @k() {{
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %c10 = arith.constant 10 : index
    scf.for %a = %c1 to %c7 step %c2 {{
      scf.for %b = %c3 to %c10 step %c3 {{
        scf.for %c = %c0 to %c2 step %c1 {{
          %t = nisa.alloc : memref<128x16xf32, {SB}>
          nisa.memset(dst=memref<128x16xf32, {SB}> %t, value=f32 %zero) engine=vector
        }} {{nki.range = "affine"}}
      }} {{nki.range = "sequential"}}
    }} {{nki.range = "affine"}}
    func.return
  }}
}}"""


def test_slot_is_the_linear_iteration_number():
    # a in {1, 3, 5}, b in {3, 6, 9}, c in {0, 1}: 18 executions numbered 0..17
    trace = execute(allocate(NEST))
    t = [i for i in trace.instances if i.alloc.result.name_hint == "t"]
    assert [i.slot for i in t] == list(range(18))
    assert copies(t[0].alloc) == 4
    assert [i.rect[3] for i in t[:5]] == [0, 64, 128, 192, 0]    # copy = slot mod 4
    nest = multibuffer.rotation_nest(allocs(parse(NEST))["t"])
    assert nest.total_iterations == 18 and nest.slot((5, 9, 1)) == 17 and nest.slot((3, 3, 0)) == 6


# -------------------------------------------------------------------- the oracle


class Instance:
    def __init__(self, alloc: AllocOp, time: int, slot: int | None, rect, loop_exec):
        self.alloc, self.start, self.slot, self.rect = alloc, time, slot, rect
        self.last = time
        self.loop_exec = loop_exec      # [end time] of the execution of its innermost loop
        self.until = None               # start of the instance that takes the same copy


class Trace:
    def __init__(self):
        self.time = 0
        self.instances: list[Instance] = []
        self.current: dict[AllocOp, Instance] = {}
        self.by_alloc: dict[AllocOp, list[Instance]] = {}


def base_alloc(value) -> AllocOp | None:
    while isinstance(value, OpResult) and value.op.name in VIEW_OPS:
        value = value.op.operands[0]
    return value.op if isinstance(value, OpResult) and isinstance(value.op, AllocOp) else None


def execute(module: ModuleOp) -> Trace:
    """Run the loops of the (single) function in program order, recording tensor instances."""
    func = next(op for op in module.walk() if op.name == "func.func")
    trace, env = Trace(), {}
    run_block(func.body.blocks[0], env, trace, None)
    return trace


BINOPS = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
          "arith.muli": lambda a, b: a * b, "arith.divui": lambda a, b: a // b,
          "arith.floordivsi": lambda a, b: a // b}


def run_block(block, env, trace: Trace, loop_exec) -> None:
    for op in block.ops:
        trace.time += 1
        if op.name == "arith.constant":
            v = op.properties["value"] if "value" in op.properties else op.attributes["value"]
            if isinstance(v, IntegerAttr):
                env[op.results[0]] = v.value.data
        elif op.name in BINOPS:
            env[op.results[0]] = BINOPS[op.name](env[op.operands[0]], env[op.operands[1]])
        elif op.name == "scf.for":
            lb, ub, step = (env[v] for v in op.operands[:3])
            body = op.regions[0].blocks[0]
            exec_end = [None]
            for iv in range(lb, ub, step):
                env[body.args[0]] = iv
                run_block(body, env, trace, exec_end)
            exec_end[0] = trace.time
        elif isinstance(op, AllocOp):
            record_alloc(op, env, trace, loop_exec)
        else:
            for v in op.operands:
                a = base_alloc(v) if isinstance(v.type, MemRefType) else None
                if a is not None and a in trace.current:
                    trace.current[a].last = trace.time


def record_alloc(op: AllocOp, env, trace: Trace, loop_exec) -> None:
    if "nkim.offset" not in op.attributes:
        return
    k = copies(op)
    slot = env[op.copy_index] if op.copy_index is not None else None
    c = slot % k if slot is not None else 0
    p, off = attr(op, "nkim.partition"), attr(op, "nkim.offset")
    lo = off + c * (attr(op, "nkim.copy_stride") or 0)
    space = op.result.type.memory_space.space.data
    rect = (space, p, p + op.result.type.get_shape()[0], lo, lo + bytes_per_partition(op.result))
    inst = Instance(op, trace.time, slot, rect, loop_exec if k > 1 else None)
    previous = trace.by_alloc.setdefault(op, [])
    if k > 1 and len(previous) >= k:
        previous[-k].until = trace.time
    previous.append(inst)
    trace.instances.append(inst)
    trace.current[op] = inst


def in_flight(i: Instance) -> tuple[int, int]:
    """[start, end] during which the instance's bytes may be in use."""
    if i.loop_exec is None:
        return i.start, i.last
    end = i.loop_exec[0] if i.until is None else min(i.until - 1, i.loop_exec[0])
    return i.start, max(i.last, end)


def overlap(a, b) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]


def check_trace(trace: Trace) -> None:
    for alloc, insts in trace.by_alloc.items():
        k = copies(alloc)
        if k > 1:
            assert 2 <= k <= 4 and k <= len(insts)
            assert [i.slot for i in insts] == list(range(len(insts))), alloc
        for i in insts:
            space, _, _, lo, hi = i.rect
            if space == "sbuf":
                assert lo % 64 == 0 and hi <= SBUF_BYTES["trn2"]
            else:
                assert lo % 4 == 0 and hi <= 16384
                assert (hi - lo > 2048 and lo % 2048 == 0) or lo // 2048 == (hi - 1) // 2048
    spans = [(in_flight(i), i) for i in trace.instances]
    for n, ((s1, e1), a) in enumerate(spans):
        for (s2, e2), b in spans[n + 1:]:
            if s1 <= e2 and s2 <= e1:
                assert not overlap(a.rect, b.rect), (a.alloc, a.slot, b.alloc, b.slot)


# -------------------------------------------------------------- random loop programs

FREE = (16, 100, 512, 3000)


class Gen:
    def __init__(self, rng: random.Random, big: bool):
        self.rng, self.n, self.lines, self.big = rng, 0, [], big

    def tensor(self, scope: list, indent: str, depth: int) -> None:
        rng = self.rng
        space = rng.choice(("sbuf", "sbuf", "psum"))
        free = rng.choice(FREE if space == "sbuf" else FREE[:3])
        if space == "sbuf" and self.big and depth > 0 and rng.random() < 0.5:
            free = rng.choice((14000, 20000, 26000))    # 56000..104000 bytes per copy
        name = f"t{self.n}"
        self.n += 1
        ty = f"memref<128x{free}xf32, #nisa.mem<{space}>>"
        self.lines.append(f"{indent}%{name} = nisa.alloc : {ty}")
        self.lines.append(f"{indent}nisa.memset(dst={ty} %{name}, value=f32 %zero) engine=vector")
        scope.append((name, free, space))

    def use(self, scope: list, indent: str) -> None:
        dst = self.rng.choice(scope)
        srcs = [t for t in scope if t[1] == dst[1] and t != dst and not (t[2] == dst[2] == "psum")]
        if srcs:
            src = self.rng.choice(srcs)
            self.lines.append(
                f"{indent}nisa.tensor_copy(dst=memref<128x{dst[1]}xf32, #nisa.mem<{dst[2]}>> %{dst[0]}, "
                f"src=memref<128x{src[1]}xf32, #nisa.mem<{src[2]}>> %{src[0]}) engine=vector")

    def block(self, scope: list, depth: int) -> None:
        indent = "    " + "  " * depth
        scope = list(scope)
        for _ in range(self.rng.randint(2, 6)):
            r = self.rng.random()
            if r < 0.4 or not scope:
                self.tensor(scope, indent, depth)
            elif r < 0.75:
                self.use(scope, indent)
            elif depth < 3:
                lb, step, trips = self.rng.choice((0, 1)), self.rng.choice((1, 2)), self.rng.randint(1, 3)
                kind = self.rng.choice(("affine", "affine", "sequential"))
                iv = f"i{self.n}"
                self.n += 1
                self.lines.append(f"{indent}scf.for %{iv} = %c{lb} to %c{lb + trips * step} step %c{step} {{")
                self.block(scope, depth + 1)
                self.lines.append(f'{indent}}} {{nki.range = "{kind}"}}')
        if scope:       # keep some outer tensors live across what follows
            self.use(scope, indent)


def random_loop_program(seed: int, big: bool = False) -> str:
    gen = Gen(random.Random(seed), big)
    gen.block([], 0)
    consts = "\n    ".join(f"%c{v} = arith.constant {v} : index" for v in range(8))
    body = "\n".join(gen.lines)
    return f"""module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @r() {{
    %zero = arith.constant 0.0 : f32
    {consts}
{body}
    func.return
  }}
}}"""


@pytest.mark.parametrize("seed", range(30))
def test_random_loop_programs_rotating_copies_never_collide(seed):
    module = allocate(random_loop_program(seed))
    check_trace(execute(module))


@pytest.mark.parametrize("seed", range(40))
def test_random_loop_programs_under_memory_pressure(seed):
    text = random_loop_program(seed, big=True)
    try:
        module = allocate(text)
    except NKIAllocationError:
        # only when even one copy each does not fit
        with pytest.raises(NKIAllocationError):
            allocate(text, max_copies=1)
        return
    check_trace(execute(module))
    allocate(text, max_copies=1)      # fits with copies -> fits without


def test_property_generators_exercise_rotation_and_fallback():
    """The random programs above do rotate tensors, and under pressure some give up copies."""
    rotating = sum(memory_report.report(allocate(random_loop_program(s)))["rotating_tensors"]
                   for s in range(30))
    assert rotating >= 20
    fell = 0
    for s in range(40):
        try:
            module = allocate(random_loop_program(s, big=True))
        except NKIAllocationError:
            continue
        for op in allocs(module).values():
            nest = multibuffer.rotation_nest(op)
            fell += nest is not None and multibuffer.max_copies_for(nest, 4) > copies(op)
    assert fell >= 5


# ---------------------------------------------------------------------- the report

REPORT = f"""module attributes {{nisa.target = #nisa.target<trn2>}} {{
  func.func @k() {{
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %a = nisa.alloc : memref<128x512xf32, {SB}>
    nisa.memset(dst=memref<128x512xf32, {SB}> %a, value=f32 %zero) engine=vector
    nisa.release %a : memref<128x512xf32, {SB}>
    scf.for %i = %c0 to %c2 step %c1 {{
      %u = nisa.alloc : memref<128x256xf32, {SB}>
      nisa.memset(dst=memref<128x256xf32, {SB}> %u, value=f32 %zero) engine=vector
    }} {{nki.range = "affine"}}
    %q = nisa.alloc {{nkim.address = [32, 4096]}} : memref<32x64xf32, {SB}>
    nisa.memset(dst=memref<32x64xf32, {SB}> %q, value=f32 %zero) engine=vector
    %p = nisa.alloc : memref<128x300xf32, {PS}>
    %p2 = nisa.alloc : memref<128x600xf32, {PS}>
    nisa.release %p : memref<128x300xf32, {PS}>
    nisa.release %p2 : memref<128x600xf32, {PS}>
    func.return
  }}
}}"""


def test_report_on_a_hand_computed_example():
    module = allocate(REPORT)
    by = allocs(module)
    # SBUF: a [0, 2048) then dead; u: 2 copies of 1024 over the loop: best fit puts them at
    # [0, 2048), a's bytes; coldest fit (below the peak best fit set, 4352) moves them to
    # the never-used [2048, 4096), so u's first memset does not wait for a's;
    # q pinned on partitions 32..63 at [4096, 4352).  PSUM: p (1200) in bank 0, p2 (2400)
    # from bank 1 on (banks 1 and 2).
    assert [attr(by[n], "nkim.offset") for n in ("a", "u", "q", "p", "p2")] == [0, 2048, 4096, 0, 2048]
    rep = memory_report.report(module)
    assert rep == {
        "sbuf": {"peak_bytes": 4352, "max_live_bytes": 2048, "fragmentation": 0.5294,
                 "partition_peak_bytes": [[0, 31, 4096], [32, 63, 4352], [64, 127, 4096]]},
        "psum": {"peak_bytes": 4448, "max_live_bytes": 3600, "fragmentation": 0.1906,
                 "partition_peak_bytes": [[0, 127, 4448]], "banks_used": 3},
        "rotating_tensors": 1,
    }
    entry = memory_report.manifest_entry(module)
    assert json.loads(json.dumps(entry)) == entry
    assert entry["sbuf_partition_peak_bytes"][1] == [32, 63, 4352] and entry["psum_banks_used"] == 3


def test_report_of_an_unallocated_module_is_empty():
    rep = memory_report.report(parse(REPORT))
    assert rep["sbuf"]["peak_bytes"] is None and rep["rotating_tensors"] is None


def test_run_length():
    assert memory_report.run_length([5, 5, 0, 0, 7]) == [[0, 1, 5], [2, 3, 0], [4, 4, 7]]
    assert memory_report.run_length([]) == []


def test_manifest_carries_the_report(tmp_path):
    import numpy as np
    import nki_mlir.language as nl
    from nki_mlir import jit

    @jit
    def double(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(2):
            t = nl.load(a[i * 128:(i + 1) * 128, :])
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(t, t))
        return out

    a = np.arange(256 * 64, dtype=np.float32).reshape(256, 64)
    np.testing.assert_array_equal(double(a), a + a)
    ck = double.compile(a)
    mem = ck.manifest["memory"]
    assert mem["rotating_tensors"] >= 1 and mem["sbuf_max_live_bytes"] <= mem["sbuf_peak_bytes"]
    assert mem["sbuf_partition_peak_bytes"][0][:2] == [0, 127]
    assert "nkim.copies = 2" in ck.ir("nisa")
