"""Placement and schedule quality of our example kernels (issue 5, ``bench/``).

    python bench/placement.py            (from the repo root)

Compiles the tiled matmul, softmax, layernorm and attention kernels of
``examples/kernels.py`` at a few sizes (nothing is run) and prints one table row per
kernel and shape, read from the final ``nisa`` module:

- SBUF peak: ``nkim.sbuf_peak_bytes``, bytes per partition the placement spans;
- max-live: ``nkim.sbuf_max_live_bytes``, the most bytes per partition live at one program
  point (copies of multi-buffered tensors included): no placement can use fewer;
- ratio: peak / max-live (1.00 = no fragmentation);
- 1-copy: the same max-live bound with every tensor single-buffered, computed here from
  the ``nisa.alloc`` live ranges (:mod:`nki_mlir.passes.liveness`): what the kernel would
  need without multi-buffering (peak - 1-copy = the SBUF spent on overlapping iterations);
- PSUM peak and max-live: the same for PSUM (bytes per partition, out of 16 KiB);
- x-edges: cross-engine dependency edges, the ``nkim.deps`` entries plus the
  ``nkim.deps_carried`` triples of every instruction (semaphore waits in hardware);
- multi-buf: tensors the allocator multi-buffered (``nkim.copies`` > 1), with the copies.

When the allocator does not annotate the max-live attributes, they are recomputed here
from the live ranges (marked ``*``; copies count as k x the tensor's size there).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import nki_mlir as nki  # noqa: E402
from nki_mlir.compiler import parse_module  # noqa: E402
from nki_mlir.dialects.common import space_of  # noqa: E402
from nki_mlir.dialects.nisa import AllocOp  # noqa: E402
from nki_mlir.dialects.effects import bytes_per_partition  # noqa: E402
from nki_mlir.passes.liveness import live_ranges  # noqa: E402
from kernels import attention, layernorm, row_softmax, tiled_matmul  # noqa: E402

BF16 = ml_dtypes.bfloat16


def _z(shape, dtype=np.float32):
    return np.zeros(shape, dtype)


#: (kernel, shape label, arguments) -- only shapes and dtypes matter (nothing runs)
CASES = [
    (tiled_matmul, "K=M=N=512 bf16", (_z((512, 512), BF16), _z((512, 512), BF16))),
    (tiled_matmul, "K=1024 M=256 N=1024", (_z((1024, 256), BF16), _z((1024, 1024), BF16))),
    (row_softmax, "256x512", (_z((256, 512)),)),
    (row_softmax, "1024x2048", (_z((1024, 2048)),)),
    (layernorm, "256x1024", (_z((256, 1024)), _z((1, 1024)), _z((1, 1024)))),
    (layernorm, "1024x4096", (_z((1024, 4096)), _z((1, 4096)), _z((1, 4096)))),
    (attention, "S=512 d=128", (_z((512, 128)), _z((512, 128)), _z((512, 128)))),
    (attention, "S=1024 d=128", (_z((1024, 128)), _z((1024, 128)), _z((1024, 128)))),
]


@dataclass
class Row:
    kernel: str
    shape: str
    sbuf_peak: int
    sbuf_live: int
    sbuf_one_copy: int
    psum_peak: int
    psum_live: int
    recomputed: bool
    edges: int
    multi: int
    copies: int
    schedule: str


def _int_attr(module: ModuleOp, name: str) -> int | None:
    a = module.attributes.get(name)
    return a.value.data if isinstance(a, IntegerAttr) else None


def _copies(op: AllocOp) -> int:
    a = op.attributes.get("nkim.copies")
    return a.value.data if isinstance(a, IntegerAttr) else 1


def max_live(module: ModuleOp, space: str, copies: bool = True) -> int:
    """Max over program points of the bytes per partition of the ``space`` tensors live
    there, from :func:`~nki_mlir.passes.liveness.live_ranges` (each tensor counted once,
    or ``nkim.copies`` times when ``copies``).

    With ``copies``: the fallback when the allocator does not annotate
    ``nkim.<space>_max_live_bytes``; without: the single-buffered bound of the table.
    """
    best = 0
    for f in module.walk():
        if not isinstance(f, FuncOp):
            continue
        ranges = [r for r in live_ranges(f) if space_of(r.alloc.result) == space]
        events: list[tuple[int, int]] = []
        for r in ranges:
            size = bytes_per_partition(r.alloc.result) * (_copies(r.alloc) if copies else 1)
            events += [(r.start, size), (r.end + 1, -size)]
        cur = 0
        for _, delta in sorted(events, key=lambda e: (e[0], e[1])):  # frees before allocs
            cur += delta
            best = max(best, cur)
    return best


def measure(kernel, shape: str, args: tuple) -> Row:
    ck = nki.compile(kernel, *args, use_cache=False)
    module = parse_module(ck.ir("nisa"))
    sbuf_live = _int_attr(module, "nkim.sbuf_max_live_bytes")
    psum_live = _int_attr(module, "nkim.psum_max_live_bytes")
    recomputed = sbuf_live is None or psum_live is None
    if sbuf_live is None:
        sbuf_live = max_live(module, "sbuf")
    if psum_live is None:
        psum_live = max_live(module, "psum")
    edges = multi = copies = 0
    for op in module.walk():
        deps = op.attributes.get("nkim.deps")
        if isinstance(deps, ArrayAttr):
            edges += len(deps.data)
        carried = op.attributes.get("nkim.deps_carried")
        if isinstance(carried, ArrayAttr):
            edges += len(carried.data)
        if isinstance(op, AllocOp) and _copies(op) > 1:
            multi += 1
            copies += _copies(op)
    sched = module.attributes.get("nkim.schedule")
    return Row(kernel.__name__, shape, _int_attr(module, "nkim.sbuf_peak_bytes") or 0, sbuf_live,
               max_live(module, "sbuf", copies=False),
               _int_attr(module, "nkim.psum_peak_bytes") or 0, psum_live, recomputed, edges,
               multi, copies, getattr(sched, "data", "?"))


def main() -> int:
    rows = [measure(*case) for case in CASES]
    print(f"nki-mlir {nki.__version__}: SBUF/PSUM placement and cross-engine edges "
          f"(target trn2, schedule {rows[0].schedule!r}; bytes are per partition)")
    head = (f"{'kernel':<14}{'shape':<22}{'SBUF peak':>10}{'max-live':>10}{'ratio':>7}{'1-copy':>8}"
            f"{'PSUM peak':>11}{'max-live':>10}{'x-edges':>9}{'multi-buf':>11}")
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio = f"{r.sbuf_peak / r.sbuf_live:.2f}" if r.sbuf_live else "-"
        mark = "*" if r.recomputed else " "
        multi = f"{r.multi} ({r.copies}c)" if r.multi else "0"
        print(f"{r.kernel:<14}{r.shape:<22}{r.sbuf_peak:>10}{r.sbuf_live:>9}{mark}{ratio:>7}{r.sbuf_one_copy:>8}"
              f"{r.psum_peak:>11}{r.psum_live:>9}{mark}{r.edges:>9}"
              f"{multi:>11}")
    if any(r.recomputed for r in rows):
        print("* max-live recomputed here from nisa.alloc live ranges (passes/liveness.py): "
              "the module has no nkim.sbuf_max_live_bytes / nkim.psum_max_live_bytes")
    print("ratio = SBUF peak / max-live (1.00: no placement of these tensors and copies could "
          "use less); 1-copy = max-live if nothing were multi-buffered;\nx-edges = nkim.deps "
          "entries + nkim.deps_carried triples; multi-buf = tensors with nkim.copies > 1 "
          "(their copies in total)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
