"""``nki.collectives`` on multi-rank launches (``ncc.simulate(kernel, num_ranks=N)``).

Every collective runs on 2 and 4 ranks and is compared with what NumPy computes from the
ranks' inputs; user mistakes are NKIErrors located at the kernel line (or the launch).
Kernels are in this file, so error lines are found by the text on them.
"""
import inspect
import os

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.collectives as ncc
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIError, NKIRuntimeError

RNG = np.random.default_rng(11)
THIS = os.path.abspath(inspect.getsourcefile(lambda: 0))
OPS = {"add": (nl.add, np.sum), "maximum": (nl.maximum, np.max), "minimum": (nl.minimum, np.min)}


def _rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _line(text: str) -> int:
    for i, line in enumerate(open(THIS).read().splitlines(), 1):
        if text in line and "_line(" not in line and "_at(" not in line:
            return i
    raise AssertionError(text)


def _at(err: NKIError, text: str) -> None:
    assert err.loc is not None, str(err)
    assert os.path.samefile(err.loc.file, THIS), (err.loc, str(err))
    assert err.loc.line == _line(text), (str(err), text)
    assert err.loc.col >= 1


def _world(n):
    return (tuple(range(n)),)


# ------------------------------------------------------------------------------ kernels


@nki.jit
def all_reduce_hbm(x, groups, op):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(groups), op=OPS[op][0])
    return out


@nki.jit
def all_reduce_sbuf(x, groups):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    ncc.all_reduce([t], [r], ncc.ReplicaGroup(groups), nl.add)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def all_reduce_coalesced(x, y, groups):
    a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x, y], dsts=[a, b], replica_group=ncc.ReplicaGroup(groups), op=nl.add)
    return a, b


@nki.jit
def all_gather_hbm(x, groups):
    n = len(groups[0])
    out = nl.ndarray((n * x.shape[0], x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_gather(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(groups), collective_dim=0)
    return out


@nki.jit
def all_gather_sbuf_free(x, groups):
    n = len(groups[0])
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    g = nl.ndarray((x.shape[0], n * x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    ncc.all_gather(srcs=[t], dsts=[g], replica_group=ncc.ReplicaGroup(groups), collective_dim=1)
    out = nl.ndarray(g.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=g)
    return out


@nki.jit
def reduce_scatter_hbm(x, groups, op):
    n = len(groups[0])
    out = nl.ndarray((x.shape[0] // n, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.reduce_scatter(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(groups),
                       collective_dim=0, op=OPS[op][0])
    return out


@nki.jit
def all_to_all_hbm(x, groups):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_to_all(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(groups), collective_dim=0)
    return out


@nki.jit
def permute_hbm(x, pairs):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)  # ranks that receive nothing keep their own data
    ncc.collective_permute(srcs=[x], dsts=[out], source_target_pairs=pairs)
    return out


@nki.jit
def ring(x, y, groups):
    """Two channels of a ring shift, plus the ring bookkeeping of step 1 and 2."""
    rg = ncc.ReplicaGroup(groups)
    a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.shared_hbm)
    ncc.collective_permute_implicit(srcs_by_channel=[[x], [y]], dsts_by_channel=[[a], [b]],
                                    replica_group=rg, channel_ids=[0, 1])
    ids = nl.ndarray((1, 3), dtype=nl.int32, buffer=nl.sbuf)
    for i in nl.static_range(3):
        who = ncc.collective_permute_implicit_current_processing_rank_id(i, rg)
        nisa.memset(dst=ids[0:1, i:i + 1], value=who)
    out_ids = nl.ndarray((1, 3), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out_ids, src=ids)
    return a, b, out_ids


@nki.jit
def ring_reduce(x, y, groups, op):
    d = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.collective_permute_implicit_reduce([[x]], [[y]], [[d]], ncc.ReplicaGroup(groups), OPS[op][0])
    return d


@nki.jit
def by_rank(x):
    """Rank r returns row block r of x (rank_id in index arithmetic)."""
    r = ncc.rank_id()
    t = nl.ndarray((32, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[r * 32:(r + 1) * 32, :])
    out = nl.ndarray((32, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def gather_v(x, meta, groups, known):
    n = len(groups[0])
    out = nl.ndarray((n * 16,), dtype=x.dtype, buffer=nl.shared_hbm)
    m = nl.ndarray(meta.shape, dtype=meta.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=m, src=meta)
    ncc.all_gather_v(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(groups),
                     metadata_tensor=m, recv_counts_known=known)
    return out, m


@nki.jit
def to_all_v(x, meta, groups):
    n = len(groups[0])
    out = nl.ndarray((n * 8,), dtype=x.dtype, buffer=nl.shared_hbm)
    m = nl.ndarray(meta.shape, dtype=meta.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=m, src=meta)
    ncc.all_to_all_v([x], [out], ncc.ReplicaGroup(groups), m)
    return out, m


# -------------------------------------------------------------------------------- values


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("op", ["add", "maximum", "minimum"])
def test_all_reduce(n, op):
    x = _rand(n, 128, 64)
    got = ncc.simulate(all_reduce_hbm, num_ranks=n)(x, _world(n), op)
    want = OPS[op][1](x, axis=0)
    for r in range(n):
        np.testing.assert_allclose(got[r], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [2, 4])
def test_all_reduce_sbuf_and_coalesced(n):
    x, y = _rand(n, 128, 32), _rand(n, 64, 8)
    got = ncc.simulate(all_reduce_sbuf, num_ranks=n)(x, _world(n))
    np.testing.assert_allclose(got, np.broadcast_to(x.sum(0), x.shape), rtol=1e-5, atol=1e-5)
    a, b = ncc.simulate(all_reduce_coalesced, num_ranks=n)(x, y, _world(n))
    np.testing.assert_allclose(a[n - 1], x.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b[0], y.sum(0), rtol=1e-5, atol=1e-5)


def test_all_reduce_in_two_sub_groups():
    x = _rand(4, 16, 8)
    got = ncc.simulate(all_reduce_hbm, num_ranks=4)(x, ((0, 2), (1, 3)), "add")
    for r, peer in ((0, 2), (1, 3), (2, 0), (3, 1)):
        np.testing.assert_allclose(got[r], x[r] + x[peer], rtol=1e-6)


@pytest.mark.parametrize("n", [2, 4])
def test_all_gather(n):
    x = _rand(n, 32, 16)
    got = ncc.simulate(all_gather_hbm, num_ranks=n)(x, _world(n))
    for r in range(n):
        np.testing.assert_array_equal(got[r], np.concatenate(list(x), axis=0))
    got = ncc.simulate(all_gather_sbuf_free, num_ranks=n)(x, _world(n))
    np.testing.assert_array_equal(got[n - 1], np.concatenate(list(x), axis=1))


def test_all_gather_follows_group_order():
    x = _rand(2, 8, 4)
    got = ncc.simulate(all_gather_hbm, num_ranks=2)(x, ((1, 0),))
    np.testing.assert_array_equal(got[0], np.concatenate([x[1], x[0]]))


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("op", ["add", "maximum"])
def test_reduce_scatter(n, op):
    x = _rand(n, 16 * n, 8)
    got = ncc.simulate(reduce_scatter_hbm, num_ranks=n)(x, _world(n), op)
    total = OPS[op][1](x, axis=0)
    for r in range(n):
        np.testing.assert_allclose(got[r], np.split(total, n)[r], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [2, 4])
def test_all_to_all(n):
    x = _rand(n, 8 * n, 4)
    got = ncc.simulate(all_to_all_hbm, num_ranks=n)(x, _world(n))
    for r in range(n):
        np.testing.assert_array_equal(got[r], np.concatenate([np.split(x[s], n)[r] for s in range(n)]))


@pytest.mark.parametrize("n,pairs", [(2, ((0, 1), (1, 0))), (4, ((0, 1), (1, 2), (2, 3), (3, 0))),
                                     (4, ((0, 3), (3, 0)))])
def test_collective_permute(n, pairs):
    x = _rand(n, 16, 8)
    got = ncc.simulate(permute_hbm, num_ranks=n)(x, pairs)
    src = {t: s for s, t in pairs}
    for r in range(n):
        np.testing.assert_array_equal(got[r], x[src.get(r, r)])


@pytest.mark.parametrize("n", [2, 4])
def test_collective_permute_implicit_two_channels(n):
    x, y = _rand(n, 16, 8), _rand(n, 4, 4)
    a, b, ids = ncc.simulate(ring, num_ranks=n)(x, y, _world(n))
    for r in range(n):
        np.testing.assert_array_equal(a[r], x[(r - 1) % n])
        np.testing.assert_array_equal(b[r], y[(r - 1) % n])
        assert ids[r].tolist() == [[r, (r - 1) % n, (r - 2) % n]]


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("op", ["add", "minimum"])
def test_collective_permute_implicit_reduce(n, op):
    x, y = _rand(n, 16, 8), _rand(n, 16, 8)
    got = ncc.simulate(ring_reduce, num_ranks=n)(x, y, _world(n), op)
    f = np.add if op == "add" else np.minimum
    for r in range(n):
        np.testing.assert_allclose(got[r], f(x[(r - 1) % n], y[(r - 1) % n]), rtol=1e-6)


@pytest.mark.parametrize("n", [2, 4])
def test_rank_id(n):
    x = _rand(32 * n, 8)
    got = ncc.simulate(by_rank, num_ranks=n)([x] * n)
    np.testing.assert_array_equal(got.reshape(-1, 8), x)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("known", [False, True])
def test_all_gather_v(n, known):
    x = _rand(n, 32)
    meta = np.zeros((n, 3, n), np.uint32)
    counts = [3 + 2 * r for r in range(n)]
    for r in range(n):
        meta[r, 0, 0], meta[r, 1, 0] = counts[r], r  # send x[r][r : r + count]
    out, m = ncc.simulate(gather_v, num_ranks=n)(x, meta, _world(n), known)
    for r in range(n):
        for s in range(n):
            np.testing.assert_array_equal(out[r][16 * s:16 * s + counts[s]], x[s][s:s + counts[s]])
        assert m[r][2].tolist() == (meta[r][2].tolist() if known else counts)


@pytest.mark.parametrize("n", [2, 4])
def test_all_to_all_v(n):
    x = _rand(n, 64)
    meta = np.zeros((n, 3, n), np.uint32)
    for r in range(n):
        for j in range(n):  # rank r sends (r + j) % 4 + 1 elements from offset 10 * j to rank j
            meta[r, 0, j], meta[r, 1, j] = (r + j) % 4 + 1, 10 * j
    out, m = ncc.simulate(to_all_v, num_ranks=n)(x, meta, _world(n))
    for r in range(n):
        for s in range(n):
            c = (s + r) % 4 + 1
            np.testing.assert_array_equal(out[r][8 * s:8 * s + c], x[s][10 * r:10 * r + c])
        assert m[r][2].tolist() == [(s + r) % 4 + 1 for s in range(n)]


def test_plain_call_is_a_one_rank_world():
    x = _rand(16, 8)
    np.testing.assert_array_equal(all_reduce_hbm(x, ((0,),), "add"), x)
    y = _rand(32, 8)
    np.testing.assert_array_equal(by_rank(y), y)


# -------------------------------------------------------------------------------- errors


@nki.jit
def bad_shapes(x):
    out = nl.ndarray((x.shape[0], 2 * x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)  # E-shape
    return out


@nki.jit
def bad_gather(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_gather(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup([[0, 1]]), collective_dim=0)  # E-gather
    return out


@nki.jit
def bad_dtype(x):
    out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)  # E-dtype
    return out


@nki.jit
def group_kernel(x, groups):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(groups), op=nl.add)  # E-group
    return out


@nki.jit
def bad_op(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.multiply)  # E-op
    return out


@nki.jit
def overlapping(x):
    rg = ncc.ReplicaGroup([[0, 1], [1, 2]])  # E-overlap
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=rg, op=nl.add)
    return out


@nki.jit
def bad_pairs(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.collective_permute(srcs=[x], dsts=[out], source_target_pairs=[(0, 1), (1, 1)])  # E-pairs
    return out


@nki.jit
def unbalanced(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out, out], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)  # E-lists
    return out


@nki.jit
def a2a_sbuf(x):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    ncc.all_to_all(srcs=[t], dsts=[t], replica_group=ncc.ReplicaGroup([[0, 1]]), collective_dim=0)  # E-sbuf
    return x


@nki.jit
def runtime_mismatch(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)  # E-runtime
    return out


@pytest.mark.parametrize("kernel,marker,words", [
    (bad_shapes, "# E-shape", "shape of 'src'"),
    (bad_gather, "# E-gather", "multiplied by the group size 2"),
    (bad_dtype, "# E-dtype", "same dtype"),
    (bad_op, "# E-op", "not a supported op"),
    (overlapping, "# E-overlap", "overlap"),
    (bad_pairs, "# E-pairs", "repeat a target"),
    (unbalanced, "# E-lists", "srcs has 1 tensor(s) but dsts has 2"),
    (a2a_sbuf, "# E-sbuf", "must be on HBM"),
])
def test_bad_arguments_are_located(kernel, marker, words):
    with pytest.raises(NKIError) as info:
        ncc.simulate(kernel, num_ranks=2)(_rand(2, 128, 8))
    assert words in str(info.value), str(info.value)
    _at(info.value, marker)


@pytest.mark.parametrize("n,groups,words", [
    (4, ((0, 1),), "rank 2 is not in ReplicaGroup([[0, 1]])"),
    (2, ((0, 1, 2, 3),), "names rank 2, but the launch has 2 rank(s)"),
    (4, ((0, 1, 2), (3,)), "same number of ranks"),
])
def test_wrong_replica_group_is_located(n, groups, words):
    with pytest.raises(NKIError) as info:
        ncc.simulate(group_kernel, num_ranks=n)(_rand(n, 16, 8), groups)
    assert words in str(info.value), str(info.value)
    _at(info.value, "# E-group")


def test_ranks_with_mismatched_shapes_fail_at_run_time():
    with pytest.raises(NKIRuntimeError) as info:
        ncc.simulate(runtime_mismatch, num_ranks=2)([_rand(16, 8), _rand(16, 4)])
    assert "'src' of rank" in str(info.value), str(info.value)
    _at(info.value, "# E-runtime")


def test_bad_launches_are_located_at_the_launch():
    with pytest.raises(NKIError) as info:
        ncc.simulate(all_gather_hbm, num_ranks=4)(_rand(2, 8, 4), _world(4))  # launch-axis
    assert "leading axis" in str(info.value)
    _at(info.value, "# launch-axis")
    with pytest.raises(NKIError) as info:
        ncc.simulate(all_gather_hbm, num_ranks=0)  # launch-zero
    _at(info.value, "# launch-zero")
    with pytest.raises(NKIError):
        ncc.simulate(all_gather_hbm[2], num_ranks=2)


def test_collectives_outside_a_kernel_and_in_an_lnc_launch():
    with pytest.raises(NKIError, match="inside an @nki.jit kernel"):
        ncc.rank_id()
    with pytest.raises(NKIError) as info:
        group_kernel[2](_rand(16, 8), ((0,),))
    assert "not supported in an SPMD / LNC grid launch" in str(info.value)
    _at(info.value, "# E-group")


def test_api_signatures_follow_the_nki_page():
    import inspect as ins
    assert list(ins.signature(ncc.all_reduce).parameters) == [
        "srcs", "dsts", "replica_group", "op", "priority", "name"]
    assert list(ins.signature(ncc.collective_permute_implicit).parameters) == [
        "srcs_by_channel", "dsts_by_channel", "replica_group", "channel_ids", "priority", "name"]
    assert os.path.samefile(nki.collectives.__file__, ncc.__file__)
    assert ncc.ReplicaGroup([0, 1]) == ncc.ReplicaGroup([[0, 1]])


@nki.jit
def diverging(x, skip):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rg = ncc.ReplicaGroup([[0, 1]])
    if ncc.rank_id() == 0:
        ncc.all_reduce(srcs=[x], dsts=[out], replica_group=rg, op=nl.add)  # E-rank0
    elif not skip:
        ncc.all_to_all(srcs=[x], dsts=[out], replica_group=rg, collective_dim=0)  # E-rank1
    return out


@pytest.mark.parametrize("skip,words", [(False, "every rank must execute the same collectives"),
                                        (True, "finished its kernel without getting there")])
def test_ranks_that_diverge_are_a_located_runtime_error(skip, words):
    with pytest.raises(NKIRuntimeError) as info:
        ncc.simulate(diverging, num_ranks=2, timeout=10)(_rand(2, 16, 8), skip)
    assert words in str(info.value), str(info.value)
    assert info.value.loc.line in (_line("# E-rank0"), _line("# E-rank1"))
