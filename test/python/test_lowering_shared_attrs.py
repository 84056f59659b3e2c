"""lower-nki-to-nisa gives the constant properties it fills in as shared attributes
(``common.bool_attr``, one string attribute): equal to fresh ones, so the same IR text."""
import os
import sys

import numpy as np
from xdsl.dialects.builtin import BoolAttr, StringAttr

import nki_mlir as nki
from nki_mlir.dialects.common import bool_attr
from nki_mlir.instructions import tensor_engine

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


def test_matmul_lowering_shares_its_constant_properties():
    from kernels import tiled_matmul
    a_t = np.ones((256, 128), dtype=np.float32)
    b = np.ones((256, 512), dtype=np.float32)
    ck = nki.compile(tiled_matmul, a_t, b, use_cache=False)
    module = ck._nisa_module()
    mms = [op for op in module.walk() if op.name == "nisa.matmul"]
    assert mms
    for op in mms:
        flag, region = op.properties["is_transpose"], op.properties["psum_zero_region"]
        assert flag is bool_attr(False) and flag == BoolAttr.from_bool(False)
        assert region is tensor_engine._SIZE2048 and region == StringAttr("size2048")
    assert "is_transpose=false" in ck.ir("nisa") and "psum_zero_region=size2048" in ck.ir("nisa")
