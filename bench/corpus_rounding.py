"""Corpus cases K28, K29 and K40: is our interpreter faithful where it misses the reference?

Three nki-library kernels of the corpus runner (``../shared/corpus/run.py``) store
intermediate results in 16-bit SBUF tiles, and the NKI ISA pages
(``nki.isa.tensor_tensor``, ``nki.isa.activation``: inputs cast to float32, float32 math,
the result cast to ``dst.dtype``) make every such store round.  The runner's references are
float64 with one rounding at the end, so an exact simulator misses them where values cancel:

- K28 ``layernorm_tkg`` (fp16): ``(x - mean) * gamma * rsqrt + beta``, each step stored fp16;
- K29 ``RoPE`` (bf16): ``x_r*cos``, ``x_i*sin``, ... each product stored bf16, then subtracted
  or added into a bf16 tile;
- K40 ``attention_cte`` (fp16 inputs): q, k and v loaded into bf16 tiles, the exponentials of
  the scores stored bf16 before the second matmul (fp32 PSUM and softmax statistics).

For each case this script runs the kernel on our interpreter and prints its mismatches against
the reference, the mismatches of a NumPy emulation of those roundings (fp32 arithmetic, a
rounding at every 16-bit store) and of the same math with fp32 intermediates, and how far the
interpreter is from the emulation, all at the runner's tolerance.

Usage (from the repo root): ``PYTHONPATH=. python bench/corpus_rounding.py [K28 K29 K40]``
(the corpus is looked up next to the checkout, ``../shared/corpus``; ``NKI_CORPUS=DIR``
overrides).  Reads the kernels and case definitions from the corpus (nothing copied here).
"""
import os
import pathlib
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.environ.get("NKI_CORPUS") or str(
    pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpus")
sys.path.insert(0, ROOT)
import run as R  # noqa: E402  (the corpus runner: inputs, references, tolerances)

import nki_mlir  # noqa: E402

nki_mlir.compat.install()
import nki  # noqa: E402


def f32(a):
    return np.asarray(a, np.float32)


def rounded(dtype):
    """Round float32 values to ``dtype`` and back (one 16-bit store)."""
    return lambda a: f32(a).astype(dtype).astype(np.float32)


fp16, bf16 = rounded(np.float16), rounded(ml_dtypes.bfloat16)


def emulate_k28(inp):
    x = f32(inp.args[0]).reshape(8, 8192)
    g, beta = f32(inp.args[1]), f32(inp.kwargs["beta"])
    mean = (x.sum(axis=1, dtype=np.float64) / 8192).astype(np.float32)[:, None]
    msq = ((x.astype(np.float64) ** 2).sum(axis=1) / 8192).astype(np.float32)[:, None]
    rs = (1.0 / np.sqrt((msq - mean * mean).astype(np.float64) + 1e-6)).astype(np.float32)
    steps = fp16(fp16(fp16(fp16(x - mean) * g) * rs) + beta)
    layout = lambda o: R._norm_tkg_layout(o, 8192).astype(np.float16)  # noqa: E731
    return layout(steps), layout(fp16((x - mean) * g * rs + beta))


def emulate_k29(inp):
    x, cos, sin = (f32(t) for t in inp.args)
    half = x.shape[0] // 2
    c, s = cos[:, :, None, :], sin[:, :, None, :]
    xr, xi = x[:half], x[half:]
    steps = np.concatenate([bf16(bf16(xr * c) - bf16(xi * s)),
                            bf16(bf16(xi * c) + bf16(xr * s))], axis=0)
    once = np.concatenate([bf16(xr * c - xi * s), bf16(xi * c + xr * s)], axis=0)
    return steps.astype(ml_dtypes.bfloat16), once.astype(ml_dtypes.bfloat16)


def _attention(q, k, v, store_exp):
    s = np.einsum("bdq,bdk->bqk", q, k)                     # MM1 into fp32 PSUM (scale 1.0)
    e = np.exp(s - s.max(axis=-1, keepdims=True))           # fp32 exp on ScalarE
    o = np.einsum("bqk,bkd->bdq", store_exp(e), v)          # MM2, fp32 PSUM
    return (o / e.sum(axis=-1)[:, None, :]).astype(np.float16)


def emulate_k40(inp):
    steps = _attention(*(bf16(t) for t in inp.args), store_exp=bf16)
    return steps, _attention(*(f32(t) for t in inp.args), store_exp=f32)


EMULATIONS = {"K28": emulate_k28, "K29": emulate_k29, "K40": emulate_k40}


def check(cid: str) -> None:
    case = R.CASES_BY_ID[cid]
    ctx = R._Ctx()
    ctx.nki = nki
    ctx.nl = __import__("nki.language", fromlist=["x"])
    ctx.mod = mod = R._import_kernel_module(case, ROOT)
    inp = case.gen(np.random.default_rng(R.SEED), ctx)
    ref = np.asarray(case.ref(inp))
    got = np.asarray(nki.simulate(nki.jit(getattr(mod, case.function)))(*inp.args, **inp.kwargs))
    steps, once = EMULATIONS[cid](inp)

    def bad(a, b):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        return np.abs(a - b) > case.atol + case.rtol * np.abs(b)

    diff = np.abs(got.astype(np.float64) - steps.astype(np.float64))
    print(f"{cid} {case.function} (rtol={case.rtol}, atol={case.atol}), {ref.size} elements")
    print(f"  interpreter vs f64 reference:         {int(bad(got, ref).sum())} mismatched")
    print(f"  rounding-per-store emulation vs ref:  {int(bad(steps, ref).sum())} mismatched, "
          f"{int((bad(got, ref) & bad(steps, ref)).sum())} of them the interpreter's too")
    print(f"  fp32-intermediates emulation vs ref:  {int(bad(once, ref).sum())} mismatched")
    print(f"  interpreter vs rounding emulation:    max |diff| {diff.max():.3g}, "
          f"{int(bad(got, steps).sum())} mismatched")


if __name__ == "__main__":
    for cid in sys.argv[1:] or list(EMULATIONS):
        check(cid)
