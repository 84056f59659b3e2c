"""Run each kernel of diagnostics_kernels.py (one mistake each) and print the diagnostic it
gets, between ``--8<-- [start:NAME]`` / ``[end:NAME]`` lines that the Diagnostics page
includes section by section.  Run by capture.py (in /tmp/nki-start)."""
import re
import subprocess
import sys
import warnings

import numpy as np

import nki_mlir as nki
import nki_mlir.language as nl
import diagnostics_kernels as k
from nki_mlir.compiler import parse_module
from nki_mlir.errors import NKIError
from nki_mlir.runtime.interpreter import decode

x = np.ones((128, 512), np.float32)


def broken_schedule():
    """The hazard checks on a schedule with one wait removed (what a scheduler bug would do)."""
    a = np.ones((256, 64), np.float32)
    text = nki.compile(k.scale_rows, a, use_cache=False).ir("nisa")
    broken = re.sub(r'(nkim.queue = "scalar", nkim.deps = )\[0 : i64\]', r"\1[]", text)
    assert broken != text
    decode(parse_module(broken)).run([a], mode="queues", hazards=True)


def bad_warmup():
    nki.benchmark(k.never_written, warmup=-1)(x)


def profile_out():
    subprocess.run([sys.executable, "-m", "nki_mlir.tools.cli", "profile",
                    "add_kernel.py::nki_tensor_add_kernel", "--out", "/proc/no-such-dir"],
                   check=False, stderr=sys.stdout, stdout=subprocess.DEVNULL)
    sys.stdout.flush()


CASES = [
    ("starargs", k.starargs, (x,)),
    ("python_value", k.python_value, (x,)),
    ("bad_dtype", k.bad_dtype, (x,)),
    ("hbm_operand", k.hbm_operand, (x,)),
    ("too_wide", k.too_wide, (np.ones((128, 128), np.float32), np.ones((128, 1024), np.float32))),
    ("shape_mismatch", k.shape_mismatch, (x,)),
    ("too_big", k.too_big, (np.ones((128, 60000), np.float32),)),
    ("bad_address", k.bad_address, (np.ones((64, 512), np.float32),)),
    ("asserts", k.asserts, (np.ones((256, 4), np.float32),)),
    ("raises", k.raises, (x,)),
    ("evaluates", k.evaluates, (x,)),
    ("undefined_name", k.undefined_name, (x,)),
    ("token_call", k.token_call, (np.ones((128, 64), np.float32),)),
    ("outside", lambda a: nl.exp(a), (x,)),
    ("bad_launch", lambda a: k.hbm_operand[0](a), (x,)),
    ("bad_target", lambda a: nki.compile(k.hbm_operand, a, target="trn9"), (x,)),
    ("bad_warmup", bad_warmup, ()),
    ("oob", k.oob, (np.ones((128, 64), np.float32), np.full((128, 1), 500, np.int32))),
    ("hazard", broken_schedule, ()),
    ("partly_written_strict",
     lambda a: nki.compile(k.last_tile_missed, a, output_check="error"), (np.ones((512, 64), np.float32),)),
]

for name, fn, args in CASES:
    print(f"--8<-- [start:{name}]")
    try:
        fn(*args)
        print("(no error)")
    except NKIError as e:
        print(f"{type(e).__name__}: {e}")
    print(f"--8<-- [end:{name}]")

print("--8<-- [start:profile_out]")
profile_out()
print("--8<-- [end:profile_out]")

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    k.never_written(x)
    k.log_of_zero(np.zeros((128, 512), np.float32))
    nki.benchmark(k.scale_rows, warmup=1, iters=1)(np.ones((256, 64), np.float32))
for w in caught:
    # the range warning ends with a reference to an internal note; shown elided
    msg = str(w.message).replace(" (nki_spec.md section 5.3)", " (...)")
    print(f"--8<-- [start:{w.category.__name__}]")
    print(f"{w.category.__name__} at {w.filename}:{w.lineno}:\n{msg}")
    print(f"--8<-- [end:{w.category.__name__}]")

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    k.last_tile_missed(np.ones((512, 64), np.float32))
for w in caught:
    print("--8<-- [start:partly_written]")
    print(f"{w.category.__name__} at {w.filename}:{w.lineno}:\n{w.message}")
    print("--8<-- [end:partly_written]")
