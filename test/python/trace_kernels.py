"""Kernels that rely on a kernel being run as Python (tracing frontend tests).

Line numbers matter to test_trace_frontend.py (it finds lines by their text).
"""
from dataclasses import dataclass
from enum import Enum

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

import trace_helpers as H


@nki.jit
def count_iterations(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    total = 0
    for _ in nl.affine_range(8):
        total += 1
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(total))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def reverse_tiles(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    tiles = []
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        tiles.append(t)
    for j, t in enumerate(reversed(tiles)):
        nisa.dma_copy(dst=out[j * 128:(j + 1) * 128, :], src=t)
    return out


@nki.jit
def ragged_rows(a):
    """Rows in tiles of 128; the last tile is short: min(128, n - i * 128)."""
    n, f = a.shape
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range((n + 127) // 128):
        rows = min(128, n - i * 128)
        t = nl.ndarray((128, f), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[0:rows, :], src=a[i * 128:i * 128 + rows, :])
        nisa.tensor_scalar(dst=t[0:rows, :], data=t[0:rows, :], op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[i * 128:i * 128 + rows, :], src=t[0:rows, :])
    return out


class Act(Enum):
    DOUBLE = 2
    TRIPLE = 3


@dataclass
class Plan(nl.NKIObject):
    act: Act
    tile_rows: int = 128
    bias: float | None = None

    def scale(self) -> float:
        return float(self.act.value)


@nki.jit
def configured(a, act_name):
    plan = Plan(Act[act_name], bias=None)
    assert isinstance(plan, nl.NKIObject)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // plan.tile_rows):
        t = H.load_rows(a, i, plan.tile_rows)
        if plan.bias is not None:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=plan.bias)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=plan.scale())
        nisa.dma_copy(dst=out[i * plan.tile_rows:(i + 1) * plan.tile_rows, :], src=t)
    return out


@nki.jit
def last_tile_escapes(a):
    out = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
    nisa.dma_copy(dst=out, src=t)  # Python: the last iteration's tile
    return out


@nki.jit
def parity_scale(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    scales = {0: 1.0, 1: -1.0}
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scales[i % 2])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def reshaped_output(a):
    out = nl.ndarray((a.shape[0] * a.shape[1],), a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out.reshape(a.shape), src=t)
    return out.reshape(a.shape)


@nki.jit
def helper_error(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    H.bad_copy(out, a)  # helper_error: call site
    return out


@nki.jit
def failing_assert(a):
    assert a.shape[0] == 256, f"expected 256 rows, got {a.shape[0]}"
    return a


@nki.jit
def tensor_in_range(a):
    for i in range(a):  # tensor_in_range
        pass
    return a


@nki.jit
def reverse_rows_descending(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    n = a.shape[0] // 128
    for i in range(n - 1, -1, -1):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[(n - 1 - i) * 128:(n - i) * 128, :], src=t)
    return out


@nki.jit
def copy_via_helper(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    H.copy_tiles(out, a, a.shape[0] // 128)
    return out


@dataclass
class Scale(nl.NKIObject):
    factor: float = 2.0


@nki.jit
def enum_and_config_args(a, act, cfg):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    op = nl.add if act is Act.DOUBLE else nl.multiply
    nisa.tensor_scalar(dst=t, data=t, op0=op, operand0=cfg.factor)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def tensor_attribute_typo(a):
    t = nl.load(a)
    has = hasattr(t, "append")  # hasattr keeps Python's answer
    t.append(t)  # tensor_attribute_typo
    return has


@nki.jit
def reduction_without_axis(a):
    t = nl.load(a)
    m = nl.max(t, mask=True)  # reduction_without_axis
    return m
