"""nki_mlir.autotune on Ray: each variant a Ray task on a local instance (2 CPUs) that
imports the kernel from its file; the same rows as the inline sweep."""
import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.autotune import tune
from nki_mlir.errors import NKIError

from autotune_kernels import tiled_add

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'nki-mlir[ray]'")


def test_ray_sweep_matches_inline():
    a = np.random.default_rng(2).standard_normal((256, 768)).astype(np.float32)
    space = {"P": [128, 256], "TILE": [256, 512]}
    inline = tune(tiled_add, [a, a], space, workers=1, use_cache=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        res = tune(tiled_add, [a, a], space, ray_address="local", use_cache=False)
        with pytest.raises(NKIError, match="define it at module level"):
            tune(nki.jit(lambda x, TILE=1: x), [a], {"TILE": [1]}, ray_address="local")
    finally:
        ray.shutdown()
    assert res.backend == "ray (2 CPUs)"
    assert [(r.params, r.status, r.latency_ns, r.reason) for r in res.rows] == \
           [(r.params, r.status, r.latency_ns, r.reason) for r in inline.rows]
    assert [r.status for r in res.rows] == ["ok", "mismatch", "compile error", "compile error"]
