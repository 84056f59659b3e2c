"""The main job: compile five Beta 2 kernels, run them on the ISA interpreter, check them
against NumPy and report compile and run times, and the cost model's estimated latency on
one trn2 NeuronCore with its ratio to the roofline lower bound (cycle-approximate, +-30%).

    python examples/run_examples.py
"""
import os
import sys
import time

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nki_mlir as nki  # noqa: E402
from kernels import attention, layernorm, row_softmax, tensor_add, tiled_matmul  # noqa: E402


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm_ref(x, gamma, beta, eps=1e-5):
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def attention_ref(q, k, v):
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
    return softmax_ref(s) @ v.astype(np.float64)


def main_cases():
    """The main job's kernels: (name, kernel, args, reference, relative tolerance)."""
    rng = np.random.default_rng(0)
    a_t = rng.standard_normal((512, 512)).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((512, 512)).astype(np.float32).astype(ml_dtypes.bfloat16)
    x = (2 * rng.standard_normal((256, 512))).astype(np.float32)
    p = rng.standard_normal((256, 1024)).astype(np.float32)
    q = rng.standard_normal((256, 1024)).astype(np.float32)
    xl = (3 * rng.standard_normal((256, 1024)) + 1).astype(np.float32)
    gamma = rng.standard_normal((1, 1024)).astype(np.float32)
    beta = rng.standard_normal((1, 1024)).astype(np.float32)
    aq, ak, av = (rng.standard_normal((512, 128)).astype(np.float32) for _ in range(3))
    return [
        ("tiled_matmul 512x512x512 bf16->fp32", tiled_matmul, (a_t, b),
         a_t.astype(np.float64).T @ b.astype(np.float64), 1e-3),
        ("row_softmax 256x512 fp32", row_softmax, (x,), softmax_ref(x), 1e-5),
        ("tensor_add 256x1024 fp32", tensor_add, (p, q), p.astype(np.float64) + q, 1e-6),
        ("layernorm 256x1024 fp32", layernorm, (xl, gamma, beta),
         layernorm_ref(xl, gamma, beta), 1e-5),
        ("attention S=512 d=128 fp32", attention, (aq, ak, av), attention_ref(aq, ak, av), 1e-5),
    ]


def main() -> int:
    cases = main_cases()
    print(f"nki-mlir {nki.__version__}: compile -> nisa -> ISA interpreter (target trn2)")
    print(f"{'kernel':<38}{'max |err|':>12}{'compile ms':>12}{'run ms':>10}"
          f"{'est. latency':>15}{'/ roofline':>11}")
    ok = True
    for name, kernel, args, ref, tol in cases:
        t0 = time.perf_counter()
        ck = nki.compile(kernel, *args, use_cache=False)
        t1 = time.perf_counter()
        out = ck(*args)
        t2 = time.perf_counter()
        err = float(np.max(np.abs(out.astype(np.float64) - ref)))
        scale = max(1.0, float(np.max(np.abs(ref))))
        good = err <= tol * scale
        ok &= good
        est = ck.estimate(keep_slices=False)
        print(f"{name:<38}{err:>12.3g}{(t1 - t0) * 1e3:>12.1f}{(t2 - t1) * 1e3:>10.1f}"
              f"{est.latency_us:>12.2f} us{est.ratio:>10.2f}x  {'OK' if good else 'MISMATCH'}")
    print("all kernels match NumPy" if ok else "SOME KERNELS DO NOT MATCH NUMPY")
    print("est. latency: the cost model's estimate for one trn2 NeuronCore (cycle-approximate, "
          "+-30%); / roofline: estimate over the roofline lower bound (1.00x = at the bound). "
          "Details: nki-mlir profile examples/kernels.py::tiled_matmul --arg 512x512xbf16 "
          "--arg 512x512xbf16")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
