"""check_stage (passes/__init__.py): each stage's rule, on the ops of the module's walk."""
import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.dialects import test as xdsl_test

from nki_mlir.dialects.common import memref
from nki_mlir.dialects.nisa import AllocOp
from nki_mlir.dialects.nki import ZerosOp
from nki_mlir.errors import NKIVerifyError
from nki_mlir.passes import DEFAULT_PIPELINE, check_stage

STAGES = [name for name, _ in DEFAULT_PIPELINE]


def _alloc(space: str, placed: bool) -> AllocOp:
    op = AllocOp.create(result_types=[memref((128, 64), "float32", space)])
    if placed:
        op.attributes["nkim.offset"] = IntegerAttr(0, 64)
    return op


def _nki_op():
    return ZerosOp.create(result_types=[memref((128, 64), "float32", "sbuf")])


def _plain_nki_op():
    """An op named ``nki.*`` that is no sugar op (nki-legalize leaves it)."""
    class Fake(xdsl_test.TestOp):
        name = "nki.not_sugar"
    return Fake.create()


@pytest.mark.parametrize("ops, failing", [
    ([_nki_op()], {"nki-legalize", "lower-nki-to-nisa"}),
    ([_plain_nki_op()], {"lower-nki-to-nisa"}),
    ([_alloc("sbuf", False)], {"nisa-allocate"}),
    ([_alloc("psum", False)], {"nisa-allocate"}),
    ([_alloc("sbuf", True), _alloc("hbm", False)], set()),
])
def test_each_stage_checks_its_rule_only(ops, failing):
    module = ModuleOp(ops)
    for stage in STAGES + ["some-other-pass"]:
        if stage in failing:
            with pytest.raises(NKIVerifyError, match=f"after {stage}"):
                check_stage(stage, module)
        else:
            check_stage(stage, module)
