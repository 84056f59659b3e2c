"""Compile-cache keys of values a kernel reads from its globals (nki_mlir.frontend.source):
object graphs with shared sub-objects and cycles are hashed by content, once per object."""
import time

import numpy as np

from nki_mlir.frontend.source import referenced_values_digest, value_digest


class Node:
    def __init__(self, value, children=()):
        self.value = value
        self.children = list(children)
        self.parent = None


def diamond_chain(n, leaf_value=1.0):
    """n levels, each node referencing the next level's node twice: 2**n paths."""
    node = Node(leaf_value)
    for i in range(n):
        node = Node(i, [node, node])
        for c in node.children:
            c.parent = node   # and a cycle back up at every level
    return node


def test_shared_subobjects_are_hashed_once():
    t0 = time.perf_counter()
    d = value_digest(diamond_chain(11))   # 3**11 paths with the parent links: each node once
    assert time.perf_counter() - t0 < 5
    assert d == value_digest(diamond_chain(11))   # cycles (parent links): still a stable key
    assert d != value_digest(diamond_chain(11, leaf_value=2.0))  # the deepest value counts
    assert d != value_digest(diamond_chain(10))


def test_sharing_is_part_of_the_key():
    a = [1, 2]
    shared, copied = [a, a], [a, [1, 2]]
    assert value_digest(shared) == value_digest([list(a)] * 2)
    assert value_digest(shared) != value_digest(copied)   # aliasing is kept in the encoding
    assert value_digest({"x": np.arange(3)}) != value_digest({"x": np.arange(4)})


CONFIG = diamond_chain(11)


def kernel_reading_config(a):
    return a * CONFIG.value


def test_kernel_globals_digest_is_stable_and_fast():
    global CONFIG
    t0 = time.perf_counter()
    d = referenced_values_digest(kernel_reading_config)
    assert time.perf_counter() - t0 < 5
    assert d == referenced_values_digest(kernel_reading_config)
    old = CONFIG
    try:
        CONFIG = diamond_chain(11, leaf_value=3.0)
        assert referenced_values_digest(kernel_reading_config) != d
    finally:
        CONFIG = old


def _helper_a(x):
    return x + SHARED


def _helper_b(x):
    return x - SHARED


SHARED = 1
HELPER = _helper_a


def _kernel_like(x):
    return HELPER(x)


def test_rebinding_a_helper_to_another_function_changes_the_digest():
    """Two helpers of one file reading the same names: which one the kernel calls is part
    of the key (the file hash and the names read alone are equal)."""
    global HELPER
    a = referenced_values_digest(_kernel_like)
    HELPER = _helper_b
    try:
        b = referenced_values_digest(_kernel_like)
    finally:
        HELPER = _helper_a
    assert a != b and referenced_values_digest(_kernel_like) == a
