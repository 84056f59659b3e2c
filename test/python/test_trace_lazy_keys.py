"""The tracer looks up a call's rolled-loop keys only when it needs them.

:func:`nki_mlir.frontend.tracer.dispatch`, ``subscript`` and ``store_subscript`` need the
keys of the rolled loops an API call's arguments depend on (``_call_keys`` / ``_keys_of``)
in two cases only: to wrap a result that holds a loop index (an ``Index`` made from those
arguments carries their keys) and, when the call fails, to unroll those loops
(``_unroll_on_failure``).  A tensor result carries no keys, so a kernel whose calls return
tensors and succeed never looks them up -- and one whose call fails on a rolled loop's index
still has that loop unrolled (the retrace).

Also: the ``name`` property the tracer gives allocations named after their variable is one
shared ``StringAttr`` per name (``dialects.common.str_attr``).
"""
from __future__ import annotations

import sys

import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.dialects.nki import NdarrayOp
from nki_mlir.frontend import arg_specs, build_module, trace_build, tracer


@nki.jit
def rolled_copies(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for j in range(2):                               # rolled: j is a loop index
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[j * 128:(j + 1) * 128, :])
        nisa.dma_copy(dst=out[j * 128:(j + 1) * 128, :], src=t)
    for k in nl.static_range(3):
        buf = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=buf, src=a[0:128, :])
    return out


@nki.jit
def index_needs_int(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for j in range(2):
        t = nl.ndarray((128, a.shape[1] * (j + 1)), a.dtype, buffer=nl.sbuf)  # needs an int
        nisa.dma_copy(dst=t[:, 0:a.shape[1]], src=a[j * 128:(j + 1) * 128, :])
        nisa.dma_copy(dst=out[j * 128:(j + 1) * 128, :], src=t[:, 0:a.shape[1]])
    return out


def _counting(monkeypatch) -> list:
    """The functions that look up keys (``index_arith``'s own, for ``j * 128``, is needed:
    its result is a loop index)."""
    calls = []
    real_call, real_of = tracer._call_keys, tracer._keys_of

    def call_keys(*a):
        calls.append(sys._getframe(1).f_code.co_name)
        return real_call(*a)

    def keys_of(*a):
        calls.append(sys._getframe(1).f_code.co_name)
        return real_of(*a)
    monkeypatch.setattr(tracer, "_call_keys", call_keys)
    monkeypatch.setattr(tracer, "_keys_of", keys_of)
    return calls


def test_no_key_lookup_when_every_call_returns_a_tensor(monkeypatch):
    monkeypatch.delenv("NKI_MLIR_LOOPS", raising=False)
    calls = _counting(monkeypatch)
    a = np.zeros((256, 8), np.float32)
    build_module(rolled_copies.fn, arg_specs(rolled_copies.fn, (a,), {}), "trn2")
    assert [v for v in trace_build.last_loop_report().values()
            if v[0] == "rolled"], "the j loop stays rolled (its index reaches the calls)"
    assert "index_arith" in calls
    assert not {"dispatch", "subscript", "store_subscript"} & set(calls)


def test_failed_call_still_unrolls_its_loop(monkeypatch):
    monkeypatch.delenv("NKI_MLIR_LOOPS", raising=False)
    calls = _counting(monkeypatch)
    a = np.zeros((256, 8), np.float32)
    build_module(index_needs_int.fn, arg_specs(index_needs_int.fn, (a,), {}), "trn2")
    report = trace_build.last_loop_report()
    assert [v[0] for v in report.values()] == ["unrolled"]
    assert "nl.ndarray" in next(iter(report.values()))[1]
    assert "dispatch" in calls    # (looked up for the failure, which named the loop)


def test_allocation_names_share_one_attribute(monkeypatch):
    monkeypatch.delenv("NKI_MLIR_LOOPS", raising=False)
    a = np.zeros((256, 8), np.float32)
    module, _ = build_module(rolled_copies.fn, arg_specs(rolled_copies.fn, (a,), {}), "trn2")
    names = [op.properties["name"] for op in module.walk()
             if isinstance(op, NdarrayOp) and "name" in op.properties]
    bufs = [n for n in names if n.data == "buf"]
    assert len(bufs) == 3
    assert all(n is bufs[0] for n in bufs)
