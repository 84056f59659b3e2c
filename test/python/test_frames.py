"""frontend/frames.result_use: what the calling code does with a call's value, read off the
bytecode after the call (how nl.loop_reduce finds its accumulator)."""
import sys

from nki_mlir.frontend.frames import result_use


def _use():
    return result_use(sys._getframe(1))


G = None


def _bind_global():
    global G
    G = _use()
    return G


def test_result_use_of_each_form():
    acc = _use()
    assert acc == ("name", "acc")
    t = {}
    t[1, 2] = _use()
    assert t[1, 2] == ("other", None)
    got = []
    got.append(_use())
    assert got == [("other", None)]
    assert _bind_global() == ("global", "G")

    def closure():
        return acc
    acc = _use()  # a cell variable: STORE_DEREF
    assert closure() == ("name", "acc")


def test_result_use_of_a_dropped_value():
    seen = []

    def record():
        seen.append(result_use(sys._getframe(1)))

    def statement():
        record()  # the value is popped
        return seen[-1]

    def returned():
        return record()

    assert statement() == ("drop", None)
    returned()
    assert seen[-1] == ("drop", None)
