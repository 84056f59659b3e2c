"""How far nki-library's attention-block golden moves when it rounds the kernel's fp8 tile.

The evidence behind ``bench/nkilib_causes.py``'s "fp8 KV-cache golden without the kernel's
fp8 activation rounding": with STATIC quantisation, the attention-block kernel stores its
QKV input, divided by the input scale and clipped, in a tile it declares ``float8_e4m3``
(``nkilib/core/qkv/qkv_tkg.py``), while the suite's torch reference (``qkv_tkg_torch.py``)
divides and clips in float32 only.  This pytest plugin, loaded next to
``nki_cpu_simulator.stubs``, runs the reference twice per golden -- as it is, and with that
one step rounded to fp8 (``torch.float8_e4m3fn``: the same values as ``float8_e4m3`` up to
its maximum of 240) -- and prints, per output, the cosine similarity and the largest
absolute difference between the two.  The suite changes nothing else; nki-library's tree is
not touched (the rounded reference is compiled from its source in memory)::

    cd nki-library
    PYTHONPATH=src:../nki-mlir/bench python -m pytest -p nki_cpu_simulator.stubs \\
        -p nkilib_golden_fp8 -s -q --test-mode simulation "test/integration/nkilib/\\
    experimental/transformer/test_attention_block_tkg.py::TestRangeAttnBlk::test_attn_blk_model[...]"

Measured on ``MODEL_WIP_GENERALITY_32-1-128-7168-None-10240-...-bfloat16-1-2-...`` (STATIC,
fp8 KV cache): X_out cosine 0.970203 (the test's minimum: 0.99), V_cache max abs diff 44.23
(its tolerance: atol 16 + rtol 7%): the golden does not pass its own test once it rounds
what the kernel must round.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import textwrap

import numpy as np

#: the reference's STATIC input quantisation, and the same with the kernel's fp8 rounding
_UNROUNDED = ("        hidden /= qkv_in_scale\n"
              "        hidden = hidden.clip(-FP8_CLIP_VALUE, FP8_CLIP_VALUE)\n")
_ROUNDED = ("        hidden = hidden / qkv_in_scale\n"
            "        hidden = hidden.clip(-FP8_CLIP_VALUE, FP8_CLIP_VALUE)"
            ".to(torch.float8_e4m3fn).float()\n")


def _rounded_qkv_reference():
    """``qkv_tkg_torch_ref`` compiled from its source with :data:`_ROUNDED` in place of
    :data:`_UNROUNDED` (in a copy of its module's namespace)."""
    mod = importlib.import_module("nkilib_src.nkilib.core.qkv.qkv_tkg_torch")
    src = textwrap.dedent(inspect.getsource(mod.qkv_tkg_torch_ref))
    if _UNROUNDED not in src:
        raise RuntimeError("qkv_tkg_torch_ref's STATIC quantisation is not the one measured here")
    ns = dict(mod.__dict__)
    exec(compile(src.replace(_UNROUNDED, _ROUNDED), mod.__file__, "exec"), ns)
    return ns["qkv_tkg_torch_ref"]


def pytest_configure(config):
    rounded = _rounded_qkv_reference()
    ref = importlib.import_module("nkilib_src.nkilib.experimental.transformer."
                                  "attention_block_tkg_torch")
    forward = ref.AttentionBlockTkgTorchRef.forward

    @functools.wraps(forward)       # (the suite checks the reference's signature)
    def both(self, *args, **kw):
        golden = forward(self, *args, **kw)
        plain = ref.qkv_tkg_torch_ref
        ref.qkv_tkg_torch_ref = rounded
        try:
            again = forward(self, *args, **kw)
        finally:
            ref.qkv_tkg_torch_ref = plain
        for name, g in golden.items():
            a = g.float().numpy().ravel().astype(np.float64)
            b = again[name].float().numpy().ravel().astype(np.float64)
            cos = a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-300)
            print(f"golden vs golden with the kernel's fp8 QKV input rounding: {name}: "
                  f"cosine {cos:.6f}, max abs diff {np.abs(a - b).max():.4g}")
        return golden

    ref.AttentionBlockTkgTorchRef.forward = both
