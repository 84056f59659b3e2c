"""PSUM matmul-written flags written lazily (issue 20, runtime/memory.py Memory.set_flags):
pending writes of placed tiles' flag views keep program order where views overlap, answer
flags_state, and reach the bytes before anything reads them (a queue-mode run settles them
at its start and end; a program-order run leaves its last writes pending)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime.memory import Memory


def _views(mem):
    a = mem.view(1, 0, "psum", 0, 0, (4, 8), np.float32)[1]      # bytes [0, 32)
    b = mem.view(2, 0, "psum", 0, 16, (4, 8), np.float32)[1]     # bytes [16, 48): over a
    c = mem.view(3, 0, "psum", 0, 64, (4, 8), np.float32)[1]     # bytes [64, 96): apart
    return a, b, c


def test_overlapping_writes_land_in_order_and_states_are_known():
    mem = Memory("trn2")
    a, b, c = _views(mem)
    mem.set_flags(a, True)
    mem.set_flags(c, True)
    mem.set_flags(b, False)            # over a's last 16 bytes, after it
    assert mem.flags_state(b) is False and mem.flags_state(c) is True
    assert mem.flags_state(a) is None  # partly overwritten: the caller reads the bytes
    row = mem.psum_flags[0]
    assert (row[0:16] == 0xFF).all() and (row[16:48] == 0).all() and (row[64:96] == 0xFF).all()
    assert np.count_nonzero(a) == 4 * 4  # its first 4 elements per row


def test_rewrites_of_one_view_replace_and_settle_writes_the_last():
    mem = Memory("trn2")
    a, b, c = _views(mem)
    for on in (False, True, False, True):
        mem.set_flags(a, on)
        assert mem.flags_state(a) is on
    mem.set_flags(c, False)
    mem.settle()
    assert (mem.psum_flags[0:4, 0:32] == 0xFF).all() and (mem.psum_flags[0:4, 64:96] == 0).all()
    sub = a[:, 2:4]                     # a view without a rectangle: written at once
    mem.set_flags(sub, False)
    assert (mem.psum_flags[0:4, 8:16] == 0).all() and mem.flags_state(sub) is False
    assert np.count_nonzero(a) == 4 * 6


def test_writes_in_other_blocks_at_the_same_coordinates_stay_pending_apart():
    """Two blocks (runtime/blocks.py) are separate arrays: views at the same rows and
    columns of each do not overlap, so a write to one leaves the other's pending write."""
    mem = Memory("trn2")
    x = mem.view(1, 0, "psum", 0, 0, (4, 8), np.float32, block=(0, 64))[1]
    y = mem.view(2, 0, "psum", 0, 64, (4, 8), np.float32, block=(64, 128))[1]
    z = mem.view(3, 0, "psum", 0, 16, (4, 8), np.float32, block=(0, 64))[1]   # over x
    mem.set_flags(x, True)
    mem.set_flags(y, False)
    assert mem.flags_state(x) is True and mem.flags_state(y) is False
    mem.set_flags(z, False)                    # x's write lands first, then z's
    assert mem.flags_state(z) is False and mem.flags_state(x) is None   # (settles)
    mem.settle()
    bx, by = mem.blocks[("psum", 0, 64)][1], mem.blocks[("psum", 64, 128)][1]
    assert (bx[0:4, 0:16] == 0xFF).all() and (bx[0:4, 16:48] == 0).all()
    assert (by[0:4, 0:32] == 0).all() and not mem.pending and not mem.pending_in


def _in_sbuf(a, b):
    """The float32 HBM tensors ``a`` ([128, 128]) and ``b`` ([128, F]) copied to SBUF."""
    ta = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    tb = nl.ndarray(b.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    return ta, tb


@nki.jit
def _two_products(a, b):
    out = nl.ndarray((2 * 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ta, tb = _in_sbuf(a, b)
    for i in nl.affine_range(2):
        acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
        nisa.nc_matmul(dst=acc, stationary=tb, moving=ta)       # accumulates
        res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=res)
    return out


def test_program_order_runs_leave_flag_writes_pending_and_later_runs_agree():
    """A program-order run leaves its last flag writes pending with the pooled memory (no
    settle at its end: the bytes of one write per PSUM tile copy saved per run); the next
    runs, in program order and in queue mode with hazard checks, settle or supersede them
    and give the same bits."""
    from nki_mlir.runtime import program as rprog

    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    prog = nki.compile(_two_products, a, b, use_cache=False).program
    rprog.release_idle_states(0)
    first, = prog.run([a, b], mode="program-order")
    want = a.T @ b + b.T @ a
    np.testing.assert_allclose(first[:128], want, rtol=1e-4, atol=1e-4)
    state = rprog._POOL[-1][0]
    assert state.mem.pending                       # left pending by the program-order run
    again, = prog.run([a, b], mode="program-order")
    queued, = prog.run([a, b], mode="queues", hazards=True)
    assert not state.mem.pending                   # a queue-mode run settles at its end
    assert first.tobytes() == again.tobytes() == queued.tobytes()


def test_kept_subviews_of_a_tile_get_rectangles_and_their_writes_are_lazy():
    """Memory.sub_rect: a kept subview of a tile's flags view gets the rectangle bounding
    it (exact when each partition's bytes are contiguous); a write to it stays pending, a
    flags_state of any view inside the exact rectangle of a pending write is that write's
    state, and a write that covers an earlier pending one drops it."""
    mem = Memory("trn2")
    t = mem.view(1, 0, "psum", 0, 0, (8, 16), np.float32)[1]       # bytes [0, 64)
    left, right = t[2:6, 0:8], t[2:6, 8:16]                        # bytes [0, 32) / [32, 64)
    every_other = t[:, ::2]                                        # not exact
    for v in (left, right, every_other):
        mem.sub_rect(v, t)
    assert mem.subrects[id(left)][2:] == (2, 6, 0, 32, 16384, True)
    assert mem.subrects[id(right)][2:] == (2, 6, 32, 64, 16384, True)
    assert mem.subrects[id(every_other)][2:] == (0, 8, 0, 60, 16384, False)
    again = t[2:6, 0:8]                # another view object of left's bytes (unrolled code)
    mem.sub_rect(again, t)
    mem.set_flags(t, False)
    assert mem.flags_state(left) is False and mem.flags_state(again) is False
    mem.set_flags(left, True)          # lands t's clear first (t is not inside left)
    assert (mem.psum_flags[0:8, 0:64] == 0).all() and mem.flags_state(again) is True
    mem.set_flags(again, False)        # covers left's pending write: dropped, never written
    assert len(mem.pending) == 1 and (mem.psum_flags[0:8, 0:64] == 0).all()
    assert mem.flags_state(right) is None          # (settles: the caller reads the bytes)
    mem.set_flags(again, True)
    mem.set_flags(every_other, False)  # not exact: again's write lands first, under it
    assert mem.flags_state(again) is None
    flags = mem.psum_flags[0:8, 0:64].view(np.uint32)
    assert (flags[:, 0::2] == 0).all() and (flags[2:6, 1:8:2] != 0).all()
    assert (flags[0:2, 1::2] == 0).all() and (flags[2:6, 9::2] == 0).all()
    taller = t[2:8, 0:8]               # left's columns on more partitions: not inside it
    mem.sub_rect(taller, t)
    mem.set_flags(left, True)
    assert mem.flags_state(taller) is None and np.count_nonzero(taller) == 4 * 8


def test_a_subview_that_steps_over_partitions_or_has_no_source_rectangle_gets_none():
    mem = Memory("trn2")
    t = mem.view(1, 0, "psum", 0, 0, (8, 16), np.float32)[1]
    mem.sub_rect(t[::2, 0:8], t)       # every other partition: no rectangle
    loose = np.zeros((8, 16), np.uint32)
    mem.sub_rect(loose[0:4], loose)    # not a flags view of a placed tile
    assert not mem.subrects


@nki.jit
def _slices_accumulated(a, b):
    """Unrolled: each matmul of a group writes its slice through its own view."""
    out = nl.ndarray((2 * 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ta, tb = _in_sbuf(a, b)
    for i in range(2):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for j in range(4):
            for k in range(i + 2):
                nisa.nc_matmul(dst=acc[:, j * 128:(j + 1) * 128], stationary=ta,
                               moving=tb[:, j * 128:(j + 1) * 128])
        nisa.tensor_copy(dst=acc[:, 128:256], src=ta)   # a non-matmul write: clears flags
        res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=res)
    return out


def test_slices_of_one_psum_tile_accumulate_per_group_in_every_mode():
    from nki_mlir.runtime import program as rprog

    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (128, 128)).astype(np.float32)
    b = rng.integers(-3, 4, (128, 512)).astype(np.float32)
    want = np.concatenate([2 * (a.T @ b), 3 * (a.T @ b)])
    want[0:128, 128:256] = want[128:256, 128:256] = a      # the copy over the products
    prog = nki.compile(_slices_accumulated, a, b, use_cache=False).program
    rprog.release_idle_states(0)
    runs = [prog.run([a, b], mode="program-order")[0] for _ in range(2)]
    assert rprog._POOL[-1][0].mem.subrects       # the matmuls' slices have rectangles
    runs.append(prog.run([a, b], mode="queues", hazards=True)[0])
    for r in runs:
        np.testing.assert_array_equal(r, want)
