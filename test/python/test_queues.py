"""Queue mode of the interpreter (runtime/queues.py) on hand-scheduled nisa IR.

The IR carries the schedule attributes of docs/backend.md section C by hand (``nkim.id``,
``nkim.queue``, ``nkim.deps``, ``nkim.deps_carried``, ``nkim.fence``), so these tests do not
depend on what ``nisa-schedule`` emits.  A missing edge must change the numbers in queue
mode (adversarial drain), and the schedule with the edge must give program-order results.
"""
from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from nki_mlir.dialects import make_context
from nki_mlir.errors import NKIHazardError, NKITypeError
from nki_mlir.runtime.interpreter import decode
from nki_mlir.runtime.program import resolve_mode
from test_interpreter import F32, Kernel


class Sched(Kernel):
    """:class:`test_interpreter.Kernel` plus schedule attributes and source locations."""

    def __init__(self, schedule: str = "list"):
        super().__init__()
        self.schedule = schedule

    def at(self, nid: int, queue: str, deps=(), carried=(), fence=False) -> None:
        """Schedule the instruction just emitted."""
        attrs = [f"nkim.id = {nid} : i64", f'nkim.queue = "{queue}"',
                 "nkim.deps = [" + ", ".join(f"{d} : i64" for d in deps) + "]"]
        if carried:
            attrs.append("nkim.deps_carried = [" + ", ".join(
                f"[{p} : i64, {lvl} : i64, {d} : i64]" for p, lvl, d in carried) + "]")
        if fence:
            attrs.append("nkim.fence")
        self.lines[-1] += " {" + ", ".join(attrs) + "}"

    def alloc_copies(self, name, shape, offset, copies, stride, slot) -> str:
        """A multi-buffered SBUF alloc: copy ``slot mod copies`` at ``offset + c * stride``."""
        from test_interpreter import T
        self.types[name] = T(shape, F32, "sbuf")
        self.lines.append(f"%{name} = nisa.alloc copy({slot}) {{nkim.partition = 0 : i64, "
                          f"nkim.offset = {offset} : i64, nkim.copies = {copies} : i64, "
                          f"nkim.copy_stride = {stride} : i64}} : {self.types[name]}")
        return "%" + name

    def build(self, tmp_path):
        """Decode the module; every nisa line gets ``loc`` of its own line in a .mlir file."""
        text = self.text().replace("module attributes {",
                                   f'module attributes {{nkim.schedule = "{self.schedule}", ', 1)
        path = tmp_path / "kernel.mlir"
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            body = line.strip()
            if "nisa." in body and not body.startswith(("module", "func")):
                line += f' loc("{path}":{n}:5)'
            out.append(line)
        path.write_text("\n".join(out) + "\n")
        module = Parser(make_context(), path.read_text()).parse_module()
        module.verify()
        return decode(module)


def line_of(tmp_path, needle: str, nth: int = 0) -> int:
    lines = (tmp_path / "kernel.mlir").read_text().splitlines()
    return [i for i, l in enumerate(lines, 1) if needle in l][nth]


def raw_kernel(edge: bool):
    """memset a=7 (vector); dma a<-x (dma0); b = a*2 (vector, waits on the dma iff ``edge``);
    dma out<-b (dma1).  Missing edge: b reads a before the dma wrote it."""
    k = Sched()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 64))
    k.ins("memset", engine="vector", dst=a, value=k.const(7.0))
    k.at(0, "vector")
    k.dma(a, x)
    k.at(1, "dma0", deps=[0])
    k.ins("tensor_scalar_arith", engine="vector", dst=b, src=a, operand0=k.const(2.0), op0="multiply")
    k.at(2, "vector", deps=[1] if edge else [])
    k.dma(o, b)
    k.at(3, "dma1", deps=[2])
    return k


X = np.arange(512, dtype=np.float32).reshape(128, 4)


def test_modes_resolve_from_arguments_and_environment(monkeypatch):
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")
    assert resolve_mode(None, None) == ("program-order", False)
    assert resolve_mode("queues", None) == ("queues", False)
    assert resolve_mode(None, True) == ("queues", True)
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")
    assert resolve_mode(None, None) == ("queues", True)
    assert resolve_mode("program-order", None) == ("program-order", False)
    with pytest.raises(NKITypeError):
        resolve_mode("program-order", True)
    with pytest.raises(NKITypeError):
        resolve_mode("eager", None)


def test_scheduled_kernel_gives_program_order_results_in_every_mode(tmp_path):
    prog = raw_kernel(edge=True).build(tmp_path)
    for kw in ({"mode": "program-order"}, {"mode": "queues", "hazards": False}, {"hazards": True}):
        (out,) = prog.run([X.copy()], **kw)
        np.testing.assert_array_equal(out, 2 * X)


def test_missing_raw_edge_changes_the_numbers_in_queue_mode(tmp_path):
    """Without the wait, the adversarial drain runs the multiply before the DMA: 2 * 7."""
    prog = raw_kernel(edge=False).build(tmp_path)
    (ordered,) = prog.run([X.copy()], mode="program-order")
    np.testing.assert_array_equal(ordered, 2 * X)
    (queued,) = prog.run([X.copy()], mode="queues", hazards=False)
    np.testing.assert_array_equal(queued, np.full_like(X, 14.0))


def test_missing_war_edge_changes_the_numbers(tmp_path):
    """b = a*2 (vector) then dma a<-y (dma0): without the WAR wait the DMA overwrites a first."""
    def kernel(edge):
        k = Sched()
        x, y = k.arg("x", (128, 4)), k.arg("y", (128, 4))
        o = k.out("out", (128, 4))
        a = k.alloc("a", (128, 4), at=(0, 0))
        b = k.alloc("b", (128, 4), at=(0, 64))
        k.dma(a, x)
        k.at(0, "dma0")
        k.ins("tensor_scalar_arith", engine="vector", dst=b, src=a, operand0=k.const(2.0),
              op0="multiply")
        k.at(1, "vector", deps=[0])
        k.dma(a, y)
        k.at(2, "dma0", deps=[1] if edge else [])
        k.dma(o, b)
        k.at(3, "dma1", deps=[1])
        return k
    y = -X
    (good,) = kernel(True).build(tmp_path).run([X.copy(), y], hazards=True)
    np.testing.assert_array_equal(good, 2 * X)
    prog = kernel(False).build(tmp_path)
    (bad,) = prog.run([X.copy(), y], mode="queues", hazards=False)
    np.testing.assert_array_equal(bad, 2 * y)
    with pytest.raises(NKIHazardError, match="race"):
        prog.run([X.copy(), y], hazards=True)


def loop_kernel(carried: bool):
    """Four 128-row tiles through two rotating copies of a (dma0) and r (vector):
    dma a <- x[i]; r = a * 2; dma out[i] <- r.  The resource edges: the load into copy
    i%2 waits for the multiply of iteration i-2 (distance 2), the multiply into r's copy
    for the store of iteration i-2."""
    k = Sched()
    x = k.arg("x", (512, 4))
    o = k.out("out", (512, 4))
    for c, v in (("c0", 0), ("c1", 1), ("c4", 4), ("c128", 128)):
        k.raw(f"%{c} = arith.constant {v} : index")
    k.raw("scf.for %i = %c0 to %c4 step %c1 {")
    k.raw("%r0 = arith.muli %i, %c128 : index")
    a = k.alloc_copies("a", (128, 4), 0, 2, 64, "%i")
    r = k.alloc_copies("r", (128, 4), 128, 2, 64, "%i")
    k.dma(a, k.subview(x, ["%r0", 0], [128, 4]))
    k.at(0, "dma0", carried=[(1, 0, 2)] if carried else ())
    k.ins("tensor_scalar_arith", engine="vector", dst=r, src=a, operand0=k.const(2.0),
          op0="multiply")
    k.at(1, "vector", deps=[0], carried=[(2, 0, 2)] if carried else ())
    k.dma(k.subview(o, ["%r0", 0], [128, 4]), r)
    k.at(2, "dma1", deps=[1])
    k.raw("}")
    return k


XL = np.arange(2048, dtype=np.float32).reshape(512, 4)


def test_carried_waits_with_rotating_copies(tmp_path):
    """With the distance-2 carried edges the two copies make the loop correct and race-free
    (without rotation, iteration i+1's load would race with iteration i's multiply)."""
    prog = loop_kernel(carried=True).build(tmp_path)
    for kw in ({"mode": "program-order"}, {"mode": "queues", "hazards": False}, {"hazards": True}):
        (out,) = prog.run([XL.copy()], **kw)
        np.testing.assert_array_equal(out, 2 * XL)


def test_missing_carried_wait_is_wrong_and_a_race(tmp_path):
    prog = loop_kernel(carried=False).build(tmp_path)
    (out,) = prog.run([XL.copy()], mode="queues", hazards=False)
    assert not np.array_equal(out, 2 * XL)
    with pytest.raises(NKIHazardError, match="race") as exc:
        prog.run([XL.copy()], hazards=True)
    assert f"kernel.mlir:{line_of(tmp_path, 'nisa.tensor_scalar_arith')}" in str(exc.value)


@pytest.mark.parametrize("mode", ["program-order", "queues"])
def test_copy_rotation_places_copies_at_offset_plus_slot_times_stride(tmp_path, mode,
                                                                       monkeypatch):
    """The copy used is slot mod k: iteration i of loop_kernel writes r's copy i%2, so after
    the run SBUF bytes [128, 144) hold tile 2 and [192, 208) tile 3 (times two).  (In
    program order r would be computed in the output, runtime/out_forward.py: off here.)"""
    from nki_mlir.runtime import out_forward
    from nki_mlir.runtime.program import _POOL
    monkeypatch.setattr(out_forward, "plan", lambda dec, op: None)
    prog = loop_kernel(carried=True).build(tmp_path)
    _POOL.clear()  # the run then leaves its state in the pool
    prog.run([XL.copy()], mode=mode, hazards=False)
    mem = _POOL[-1][0].mem       # (placed tensors live in blocks of SBUF bytes: runtime/blocks.py)
    copy0 = mem.peek("sbuf", slice(None), 128, 144).view(np.float32)
    copy1 = mem.peek("sbuf", slice(None), 192, 208).view(np.float32)
    np.testing.assert_array_equal(copy0, 2 * XL[256:384])
    np.testing.assert_array_equal(copy1, 2 * XL[384:512])


def fence_kernel(fence: bool, schedule: str = "list", deps: bool = False):
    """b = x*3 on vector; an unrelated memset (gpsimd) that may be a fence; dma out <- b with
    no wait on the vector op unless ``deps``."""
    k = Sched(schedule)
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    b = k.alloc("b", (128, 4), at=(0, 64))
    c = k.alloc("c", (128, 4), at=(0, 128))
    k.dma(a, x)
    k.at(0, "dma0")
    k.ins("tensor_scalar_arith", engine="vector", dst=b, src=a, operand0=k.const(3.0), op0="multiply")
    k.at(1, "vector", deps=[0])
    k.ins("memset", engine="gpsimd", dst=c, value=k.const(0.0))
    k.at(2, "gpsimd", fence=fence)
    k.dma(o, b)
    k.at(3, "dma1", deps=[1] if deps else [])
    return k


def test_fence_orders_everything_before_and_after(tmp_path):
    (out,) = fence_kernel(fence=True).build(tmp_path).run([X.copy()], hazards=True)
    np.testing.assert_array_equal(out, 3 * X)
    prog = fence_kernel(fence=False).build(tmp_path)
    with pytest.raises(NKIHazardError, match="race"):
        prog.run([X.copy()], hazards=True)
    (bad,) = prog.run([X + 1], mode="queues", hazards=False)  # (b still holds 3 * X: stale)
    assert not np.array_equal(bad, 3 * (X + 1))


def test_in_order_schedule_waits_on_the_previous_instruction(tmp_path):
    (out,) = fence_kernel(fence=False, schedule="in-order").build(tmp_path).run([X.copy()], hazards=True)
    np.testing.assert_array_equal(out, 3 * X)


def test_unscheduled_ir_runs_as_one_program_order_queue(tmp_path):
    """No nkim.* attributes: one queue, program order; hazards still check placements."""
    k = Kernel()
    x = k.arg("x", (128, 4))
    o = k.out("out", (128, 4))
    a = k.alloc("a", (128, 4), at=(0, 0))
    k.dma(a, x)
    k.ins("tensor_scalar_arith", engine="vector", dst=a, src=a, operand0=k.const(2.0), op0="multiply")
    k.dma(o, a)
    prog = k.program()
    (out,) = prog.run([X.copy()], hazards=True)
    np.testing.assert_array_equal(out, 2 * X)
