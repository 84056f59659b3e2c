"""The rolled-loop change check's fingerprint (:func:`nki_mlir.frontend.loops._fingerprint`,
issue 17): the kind of each value is looked up per type, not by a chain of ``isinstance``
tests per value, and gives what that chain gives.

A rolled loop fingerprints every variable of its frame at entry and at exit (nki-library's
qkv_cte: ~400 variables, ~9k rolled loops per trace), so the per-value cost counts.
"""
from __future__ import annotations

import enum
import sys

import numpy as np

from nki_mlir.frontend import loops
from nki_mlir.frontend.loops import _fingerprint


class _Plain:
    def __init__(self):
        self.items = [1, 2.5, "s", (3, None)]
        self.table = {"k": [True, b"x"]}


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a, self.b = [1], {2}


class _Color(enum.IntEnum):
    RED = 1


def _isinstance_calls(fn) -> int:
    """How many times ``fn()`` calls the builtin ``isinstance``."""
    count = 0

    def prof(frame, event, arg):
        nonlocal count
        if event == "c_call" and arg is isinstance:
            count += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_builtin_containers_need_no_isinstance():
    state = {"xs": [[i, float(i), str(i), (i, None)] for i in range(50)],
             "d": {i: {"a": (1, 2), "b": frozenset({i})} for i in range(20)}}
    _fingerprint(state, 0, {})          # (types met for the first time are classified)
    assert _isinstance_calls(lambda: _fingerprint(state, 0, {})) == 0


def test_objects_classified_once_per_type():
    objs = [_Plain() for _ in range(100)]
    _fingerprint(objs, 0, {})
    # one test per object remains: its __dict__ is a dict (what the chain did after it)
    assert _isinstance_calls(lambda: _fingerprint(objs, 0, {})) == 100


def test_values_as_the_isinstance_chain():
    p, s = _Plain(), _Slotted()
    assert _fingerprint(_Color.RED, 0, {}) is _Color.RED            # an int subclass: a scalar
    f = np.float32(1.5)
    assert _fingerprint(f, 0, {}) is f
    assert _fingerprint(np.zeros(2), 0, {})[0] == "leaf"
    assert _fingerprint(loops, 0, {}) == ("leaf", id(loops))       # a module
    items = ("list", id(p.items), (1, 2.5, "s", ("tuple", id(p.items[3]), (3, None))))
    table = ("dict", id(p.table), (("k", ("list", id(p.table["k"]), (True, b"x"))),))
    attrs = ("dict", id(p.__dict__), (("items", items), ("table", table)))
    assert _fingerprint(p, 0, {}) == ("obj", id(p), attrs)
    states: list = []
    assert _fingerprint(s, 0, {}, states) == (
        "slots", id(s), (("list", id(s.a), (1,)), ("set", id(s.b), 1, frozenset({id(2)}))))
    assert [k for _, k, _ in states] == ["slots", list, set]
    deep: list = []
    for _ in range(12):
        deep = [deep]
    fp = _fingerprint(deep, 0, {})
    for _ in range(9):
        fp = fp[2][0]
    assert fp == ("leaf", id(eval("deep" + "[0]" * 9)))             # depth > 8: a leaf


def test_an_object_claiming_another_class_is_taken_at_its_word():
    class Liar:
        """``isinstance(x, list)`` holds through ``__class__``: fingerprinted as a sequence."""
        __class__ = property(lambda self: list)

        def __iter__(self):
            return iter((1, 2))

    x = Liar()
    assert isinstance(x, list)
    assert _fingerprint(x, 0, {}) == ("Liar", id(x), (1, 2))
    assert _fingerprint([x], 0, {})[2][0] == ("Liar", id(x), (1, 2))


def test_scalar_items_need_no_call():
    """A scalar item of a list, tuple or dict (or a scalar variable of the frame) is its own
    fingerprint: taken without a call of ``_fingerprint``."""
    calls = 0

    def prof(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is _fingerprint.__code__:
            calls += 1
    state = {"xs": list(range(100)), "t": tuple("abc"), "n": 3}
    sys.setprofile(prof)
    try:
        fp = loops._fingerprint_locals(state, ("i",))
    finally:
        sys.setprofile(None)
    assert calls == 2          # the list and the tuple
    assert fp == {"xs": ("list", id(state["xs"]), tuple(range(100))),
                  "t": ("tuple", id(state["t"]), ("a", "b", "c")), "n": 3}


def test_proxies_are_leaves_without_classification(monkeypatch):
    """The tracer's tensor and loop-index proxies (most of a kernel's non-scalar variables)
    are leaves at once: no per-type lookup."""
    from nki_mlir.frontend.proxies import LoopIndex, NkiTensor
    looked: list = []
    real = loops._kind
    monkeypatch.setattr(loops, "_kind", lambda obj, t: looked.append(t) or real(obj, t))
    t = object.__new__(NkiTensor)
    i = object.__new__(LoopIndex)
    fp = _fingerprint(state := [t, i], 0, {})
    assert fp == ("list", id(state), (("leaf", id(t)), ("leaf", id(i))))
    assert looked == [list]
