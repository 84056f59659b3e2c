"""Environment options read by more than one layer.

- ``NKI_MLIR_VERIFY_EACH_PASS=1`` (:func:`verify_each_pass`): run the module verifier after
  the frontend (read by the frontend) and after every pass (read by the compile pipeline).
"""
from __future__ import annotations

import os


def verify_each_pass() -> bool:
    """``NKI_MLIR_VERIFY_EACH_PASS=1``: run the module verifier after the frontend and after
    every pass (the tests do); by default it runs once, on the final module, since the
    frontend already verifies each op as it emits it (a verifier run costs about as much as
    a pass on large kernels)."""
    return os.environ.get("NKI_MLIR_VERIFY_EACH_PASS", "0") not in ("", "0")
