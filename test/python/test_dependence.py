"""Tests of the dependence analysis (passes/dependence.py) and err_unexpected_output_dependencies.

Programs are small nisa functions; the expected edges are derived by hand from the index
arithmetic in each program (which iterations touch which rows).
"""
from __future__ import annotations

import pytest
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from nki_mlir.dialects import make_context
from nki_mlir.errors import NKIVerifyError
from nki_mlir.passes.affine import Affine, affine_of
from nki_mlir.passes.dependence import box_of
from nki_mlir.passes.dependence_graph import analyze, format_deps
from nki_mlir.passes.output_deps import check_output_dependencies

HBM = "#nisa.mem<shared_hbm>"
SB = "#nisa.mem<sbuf>"


def func_of(text: str) -> FuncOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return next(op for op in module.walk() if isinstance(op, FuncOp))


def edges(func: FuncOp) -> set[tuple]:
    return {(e.src.index, e.dst.index, e.kind, e.level, e.distance, e.reason) for e in analyze(func).edges}


def loop_program(range_kind: str, store_rows: str = "%r", copies: str = "", trips: int = 4) -> str:
    """Iteration i loads in[i*128 : +128] into a body-local tile t, exps it into u (body
    local) and stores u to out[store_rows : +128]; plus acc += u on a tile defined outside."""
    alloc_attrs = f" copy(%i) {{nkim.copies = {copies} : i64, nkim.copy_stride = 256 : i64}}" if copies else ""
    return f"""func.func @f(%in: memref<{128 * trips}x64xf32, {HBM}>, %out: memref<{128 * trips}x64xf32, {HBM}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {trips} : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %acc = nisa.alloc : memref<128x64xf32, {SB}> loc("k.py":1:1)
  scf.for %i = %c0 to %n step %c1 {{
    %r = arith.muli %i, %c128 : index
    %t = nisa.alloc{alloc_attrs} : memref<128x64xf32, {SB}>
    %u = nisa.alloc{alloc_attrs} : memref<128x64xf32, {SB}>
    %iv = memref.subview %in[%r, 0] [128, 64] [1, 1] : memref<{128 * trips}x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}>
    nisa.dma_copy(dst=memref<128x64xf32, {SB}> %t, src=memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}> %iv) engine=dma loc("k.py":3:5)
    nisa.activation(dst=memref<128x64xf32, {SB}> %u, src=memref<128x64xf32, {SB}> %t, bias=f32 %zero, scale=f32 %one, op=exp) engine=scalar loc("k.py":4:5)
    nisa.tensor_tensor_arith(dst=memref<128x64xf32, {SB}> %acc, lhs=memref<128x64xf32, {SB}> %acc, rhs=memref<128x64xf32, {SB}> %u, op=add) engine=vector loc("k.py":5:5)
    %ov = memref.subview %out[{store_rows}, 0] [128, 64] [1, 1] : memref<{128 * trips}x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}>
    nisa.dma_copy(dst=memref<128x64xf32, strided<[64, 1], offset: ?>, {HBM}> %ov, src=memref<128x64xf32, {SB}> %u) engine=dma loc("k.py":6:5)
  }} {{nki.range = "{range_kind}"}} loc("k.py":2:3)
  func.return
}}"""


def test_affine_index_expressions():
    f = func_of(loop_program("affine"))
    sub = next(op for op in f.walk() if op.name == "memref.subview")
    iv = next(op for op in f.walk() if op.name == "scf.for").body.block.args[0]
    assert affine_of(sub.offsets[0]) == Affine.of(0, {iv: 128})
    box = box_of(sub.result)
    assert box.base is f.args[0]
    assert [(d.offset, d.size, d.stride) for d in box.dims] == [(Affine.of(0, {iv: 128}), 128, 1), (Affine(0), 64, 1)]


def test_rank_reducing_subview_keeps_the_base_dims():
    f = func_of(f"""func.func @f(%a: memref<4x128x64xf32, {SB}>, %b: memref<128x64xf32, {SB}>) {{
      %v = memref.subview %a[2, 0, 0] [1, 128, 32] [1, 1, 2] : memref<4x128x64xf32, {SB}> to memref<128x32xf32, strided<[64, 2], offset: 16384>, {SB}>
      %w = memref.subview %v[0, 8] [128, 4] [1, 1] : memref<128x32xf32, strided<[64, 2], offset: 16384>, {SB}> to memref<128x4xf32, strided<[64, 2], offset: 16400>, {SB}>
      func.return }}""")
    w = [op for op in f.walk() if op.name == "memref.subview"][1]
    dims = [(d.offset.const, d.size, d.stride) for d in box_of(w.result).dims]
    assert dims == [(2, 1, 1), (0, 128, 1), (16, 4, 2)]


def test_no_false_carried_dependency_in_an_affine_range():
    got = edges(func_of(loop_program("affine")))
    carried_data = {e for e in got if e[3] is not None and e[5] == "data"}
    # only the accumulation into acc (defined outside) is carried; the stores to out[i]
    # and the body-local tiles are not
    assert carried_data == {(2, 2, "WAW", 0, 1, "data"), (2, 2, "RAW", 0, 1, "data"),
                            (2, 2, "WAR", 0, 1, "data")}
    assert (3, 3, "WAW", 0, 1, "data") not in got
    assert (0, 1, "RAW", None, None, "data") in got            # t: load -> exp, same iteration


def test_stores_to_one_location_are_a_carried_dependency():
    got = edges(func_of(loop_program("sequential", store_rows="%c0")))
    assert (3, 3, "WAW", 0, 1, "data") in got


def test_sequential_accumulation_distance_one():
    got = edges(func_of(loop_program("sequential")))
    assert (2, 2, "RAW", 0, 1, "data") in got
    assert {e for e in got if e[0] == 3 and e[1] == 3} == set()     # disjoint rows of out


def test_body_local_buffer_with_copies_gets_resource_edges_of_distance_k():
    got = edges(func_of(loop_program("affine", copies="2")))
    # t written by the load (0) in iteration i+2 reuses the bytes the exp (1) read in i
    assert (1, 0, "WAR", 0, 2, "copies") in got
    assert (3, 1, "WAR", 0, 2, "copies") in got
    assert not any(e[5] == "copies" and e[4] != 2 for e in got)
    got1 = edges(func_of(loop_program("affine")))                    # one copy: distance 1
    assert (1, 0, "WAR", 0, 1, "copies") in got1


def test_printed_edges_name_instructions_lines_and_loops():
    lines = format_deps(func_of(loop_program("affine", copies="2")))
    assert "%1 activation (k.py:4) -> %0 dma_copy (k.py:3)  WAR dst  [carried at loop k.py:2 distance 2]  (copies)" in lines
    assert "%0 dma_copy (k.py:3) -> %1 activation (k.py:4)  RAW src  [same iteration]" in lines


def test_err_unexpected_output_dependencies_is_located(tmp_path):
    src = tmp_path / "kern.py"
    src.write_text("def k():\n    for i in nl.affine_range(4):\n        t = nl.load(x)\n"
                   "        a = nl.exp(t)\n        acc += a\n        nl.store(out[0:128], a)\n")
    text = loop_program("affine", store_rows="%c0").replace('"k.py"', f'"{src}"')
    with pytest.raises(NKIVerifyError) as info:
        check_output_dependencies(func_of(text))
    err = info.value
    assert err.code == "err_unexpected_output_dependencies"
    assert (err.loc.line, err.loc.col) == (6, 5)
    assert "tensor 'out'" in err.message and "affine_range loop at kern.py:2" in err.message
    assert "sequential_range" in err.message
    text_lines = str(err).splitlines()
    assert text_lines[1] == "        nl.store(out[0:128], a)" and text_lines[2] == "    ^"


def test_accumulation_and_sequential_loops_are_not_output_dependency_errors():
    check_output_dependencies(func_of(loop_program("affine")))                       # acc += u
    check_output_dependencies(func_of(loop_program("sequential", store_rows="%c0")))


def test_single_iteration_loop_has_no_carried_edges():
    got = edges(func_of(loop_program("affine", store_rows="%c0", trips=1)))
    assert not any(e[5] == "data" and e[3] is not None for e in got)


def reused_tiles_program(tiles: int) -> str:
    """``tiles`` SBUF tiles placed on the same bytes (the allocator reusing one region), each
    loaded from ``in`` and stored to ``out`` in the entry block, after a small loop."""
    body = []
    for k in range(tiles):
        attrs = "{nkim.partition = 0 : i64, nkim.offset = 0 : i64}"
        body.append(f"""  %t{k} = nisa.alloc {attrs} : memref<128x64xf32, {SB}>
  %i{k} = memref.subview %in[{128 * k}, 0] [128, 64] [1, 1] : memref<{128 * tiles}x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: {128 * 64 * k}>, {HBM}>
  nisa.dma_copy(dst=memref<128x64xf32, {SB}> %t{k}, src=memref<128x64xf32, strided<[64, 1], offset: {128 * 64 * k}>, {HBM}> %i{k}) engine=dma loc("k.py":{10 + k}:5)
  %o{k} = memref.subview %out[{128 * k}, 0] [128, 64] [1, 1] : memref<{128 * tiles}x64xf32, {HBM}> to memref<128x64xf32, strided<[64, 1], offset: {128 * 64 * k}>, {HBM}>
  nisa.dma_copy(dst=memref<128x64xf32, strided<[64, 1], offset: {128 * 64 * k}>, {HBM}> %o{k}, src=memref<128x64xf32, {SB}> %t{k}) engine=dma loc("k.py":{10 + k}:9)""")
    return f"""func.func @f(%in: memref<{128 * tiles}x64xf32, {HBM}>, %out: memref<{128 * tiles}x64xf32, {HBM}>, %x: memref<128x64xf32, {HBM}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %l = nisa.alloc {{nkim.partition = 0 : i64, nkim.offset = 0 : i64}} : memref<128x64xf32, {SB}>
  scf.for %i = %c0 to %c4 step %c1 {{
    nisa.dma_copy(dst=memref<128x64xf32, {SB}> %l, src=memref<128x64xf32, {HBM}> %x) engine=dma loc("k.py":2:5)
  }} {{nki.range = "sequential"}} loc("k.py":1:3)
{chr(10).join(body)}
  func.return
}}"""


def test_entry_block_edges_keep_the_all_pairs_closure_in_linear_size():
    """Tiles reusing one placement conflict all-to-all; the entry-block edges come from a
    scoreboard: O(n) edges whose transitive closure orders every conflicting pair."""
    from nki_mlir.dialects.effects import RegionCache
    from nki_mlir.passes.straight_waits import conflict
    tiles = 24
    f = func_of(reused_tiles_program(tiles))
    g = analyze(f)
    nodes = g.nodes
    assert len(nodes) == 1 + 2 * tiles
    loop_node = nodes[0]
    assert {e.level for e in g.edges if e.src is loop_node and e.dst is loop_node} == {0}
    top = nodes[1:]
    regions = RegionCache()
    conflicting = {(x.index, y.index) for i, x in enumerate(top) for y in top[i + 1:]
                   if conflict(x, y, regions)}
    assert len(conflicting) > tiles * tiles       # all-to-all through the shared bytes
    succ: dict[int, set[int]] = {}
    for e in g.edges:
        if e.level is None:
            assert e.src.index < e.dst.index
            succ.setdefault(e.src.index, set()).add(e.dst.index)
    top_edges = [e for e in g.edges if e.src is not loop_node and e.dst is not loop_node]
    assert len(top_edges) <= 4 * len(top)
    reach: dict[int, set[int]] = {}
    for n in reversed(nodes):
        r = set()
        for s in succ.get(n.index, ()):
            r |= {s} | reach[s]
        reach[n.index] = r
    assert all(y in reach[x] for x, y in conflicting)
    # the loop's instruction is ordered before every entry-block access of its bytes
    # (directly or through a whole write in between: dependence_graph._nested_pairs)
    later = [n for n in top if n.name == "dma_copy" and conflict(loop_node, n, regions)]
    assert later and all(n.index in reach[loop_node.index] for n in later)
    assert len([e for e in g.edges if e.src is loop_node and e.level is None]) < len(later)
