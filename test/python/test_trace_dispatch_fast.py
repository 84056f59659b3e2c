"""The tracer's per-call fast paths (issue 17, session 9) give what the general paths give.

- :func:`nki_mlir.frontend.tracer.dispatch` passes tensor proxies and plain values to the
  handler without a call of ``unwrap`` each, and looks for loop keys only in arguments
  that can carry them (:func:`~nki_mlir.frontend.tracer._call_keys`).

(The traced IR of nki-library's attention_tkg is unchanged byte for byte: checked by hash
against the previous frontend, see the session report.)
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import arg_specs, build_module, tracer
from nki_mlir.frontend.proxies import LoopIndex, NkiTensor
from nki_mlir.frontend.values import Index


@nki.jit
def copies(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf, name="tile")
    for i in range(2):
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_dispatch_unwraps_plain_arguments_inline(monkeypatch):
    """Tensor proxies and plain values (a string, a dtype) reach the handler without ``unwrap``;
    the IR is the one the general path gives (same printed module with unwrap forced)."""
    a = np.zeros((256, 8), np.float32)
    seen = []
    real = tracer.unwrap

    def counting(x):
        seen.append(type(x))
        return real(x)
    monkeypatch.setattr(tracer, "unwrap", counting)
    module, _ = build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    # one tensor proxy: the kernel's result (trace_build); none of the calls' arguments
    assert seen.count(NkiTensor) == 1 and str not in seen, seen
    fast, inline = str(module), len(seen)

    # the general path: every argument but a tensor proxy through unwrap
    monkeypatch.setattr(tracer, "_UNWRAPS", _Everything())
    module, _ = build_module(copies.fn, arg_specs(copies.fn, (a,), {}), "trn2")
    assert str in seen and len(seen) > 2 * inline
    assert str(module) == fast


class _Everything(frozenset):
    def __contains__(self, item) -> bool:
        return True


def test_call_keys_are_the_keys_of_the_arguments():
    blk = Block(arg_types=[IndexType(), IndexType()])
    i = LoopIndex(Index.of(blk.args[0]), frozenset({"k:1"}))
    j = LoopIndex(Index.of(blk.args[1]), frozenset({"k:2"}))
    cases = [((), {}), ((1, "x", None), {"a": 2.0}), ((i,), {}), ((1,), {"s": slice(0, j)}),
             (([1, (i,)],), {"b": (j,)}), ((slice(i, 4),), {}), (({"d": i},), {})]
    for args, kwargs in cases:
        want = tracer._keys_of(args) | tracer._keys_of(tuple(kwargs.values()))
        assert tracer._call_keys(args, kwargs) == want, (args, kwargs)
