"""Corpus case K28 (nki-library layernorm_tkg, fp16): is our interpreter faithful?

The kernel writes every step of ``(x - mean) * gamma * rsqrt + beta`` into its fp16 output
tile, and the NKI ISA docs (``nki.isa.tensor_tensor``: inputs cast to float32, float32
math, results cast to ``dst.dtype``) make each step round to fp16.  This script compares
our interpreter with a NumPy emulation of those steps (fp32 arithmetic, fp16 after each
write) and with the runner's float64 reference, using the runner's tolerance.

Usage (from the repo root): PYTHONPATH=. python bench/corpus_k28_rounding.py [corpus dir]
Reads the kernel and the case definition from the corpus (nothing copied here).
"""
import sys
import numpy as np
ROOT = sys.argv[1] if len(sys.argv) > 1 else str(
    __import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "corpus")
sys.path.insert(0, ROOT)
import run as R  # noqa: E402  (the corpus runner: case K28's inputs and reference)

case = R.CASES_BY_ID["K28"]
root = ROOT
import nki_mlir
nki_mlir.compat.install()
import nki
ctx = R._Ctx(); ctx.nki = nki
ctx.nl = __import__("nki.language", fromlist=["x"])
mod = R._import_kernel_module(case, root); ctx.mod = mod
rng = np.random.default_rng(R.SEED)
inp = case.gen(rng, ctx)
ref = case.ref(inp)
got = nki.simulate(nki.jit(getattr(mod, case.function)))(*inp.args, **inp.kwargs)
got = np.asarray(got)

x = inp.args[0].astype(np.float32).reshape(8, 8192)
g = inp.args[1].astype(np.float32)
beta = inp.kwargs["beta"].astype(np.float32)
f16 = lambda a: np.asarray(a, np.float32).astype(np.float16).astype(np.float32)
mean = (x.sum(axis=1, dtype=np.float64) / 8192).astype(np.float32)[:, None]
msq = ((x.astype(np.float64) ** 2).sum(axis=1) / 8192).astype(np.float32)[:, None]
var = msq - mean * mean
rs = (1.0 / np.sqrt(var.astype(np.float64) + 1e-6)).astype(np.float32)
o = f16(x - mean)            # step 3: tensor_tensor subtract -> fp16 output_sb
o = f16(o * g)               # step 6: * gamma -> fp16
o = f16(o * rs)              # step 7: * rsqrt -> fp16
o = f16(o + beta)            # step 8: + beta -> fp16
emu = R._norm_tkg_layout(o, 8192).astype(np.float16)

def bad(a, b, rtol=2e-2, atol=1e-5):
    a = a.astype(np.float64); b = b.astype(np.float64)
    return np.abs(a - b) > atol + rtol * np.abs(b)

print("interpreter vs f64 reference: mismatched", int(bad(got, ref).sum()), "of", ref.size)
print("fp16-step emulation vs f64 reference: mismatched", int(bad(emu, ref).sum()))
print("interpreter vs emulation: bitwise equal", int((got == emu).sum()), "of", ref.size,
      "; max |diff|", float(np.abs(got.astype(np.float64) - emu.astype(np.float64)).max()),
      "; differ by >1 fp16 ulp:", int((np.abs(got.astype(np.float64) - emu.astype(np.float64))
                                      > np.spacing(np.abs(emu)).astype(np.float64) * 1.01).sum()))
print("same mismatched elements:", int((bad(got, ref) & bad(emu, ref)).sum()))
m = bad(got, ref)
print("mismatched |want| max", float(np.abs(ref[m].astype(np.float64)).max()),
      "median", float(np.median(np.abs(ref[m].astype(np.float64)))))
# with fp32 intermediates (one rounding at the end) the same tolerance would hold:
o32 = ((x - mean) * g * rs + beta)
emu32 = R._norm_tkg_layout(f16(o32), 8192).astype(np.float16)
print("fp32-intermediates emulation vs reference: mismatched", int(bad(emu32, ref).sum()))
