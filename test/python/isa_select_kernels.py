"""Kernels of our own for test_isa_select.py: the select / search / sequence instructions
(nki_spec.md section 5.4).  Shapes and dtypes come from the arguments; compile-time options
are trailing scalar/tuple/dtype arguments.  Lines tagged ``# E:<tag>`` are the calls the
negative tests expect an error to point at."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def _load(x):
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t


def _store(t):
    out = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


# ----------------------------------------------------------------------------- top-8


@nki.jit
def top8(x):
    """Top-8 values (descending) and their indices per row of x[P, N]: max8 + nc_find_index8."""
    p, n = x.shape
    t = _load(x)
    vals = nl.ndarray((p, 8), x.dtype, buffer=nl.sbuf)
    nisa.max8(dst=vals, src=t)
    idx = nl.ndarray((p, 8), nl.uint32, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=idx, data=t, vals=vals)
    return _store(vals), _store(idx)


@nki.jit
def max8_into(x, dst_dtype):
    """max8 of x (any rank <= 3) into a [P, 8] tile of dst_dtype."""
    t = _load(x)
    d = nl.ndarray((x.shape[0], 8), dst_dtype, buffer=nl.sbuf)
    nisa.max8(dst=d, src=t)
    return _store(d)


@nki.jit
def find_index8(data, vals, dst_dtype):
    d = nl.ndarray((data.shape[0], 8), dst_dtype, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=d, data=_load(data), vals=_load(vals))
    return _store(d)


@nki.jit
def match_replace8(data, vals, imm, with_idx, idx_dtype):
    d = nl.ndarray(data.shape, data.dtype, buffer=nl.sbuf)
    if with_idx:
        i = nl.ndarray((data.shape[0], 8), idx_dtype, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=d, data=_load(data), vals=_load(vals), imm=imm, dst_idx=i)
        return _store(d), _store(i)
    nisa.nc_match_replace8(dst=d, data=_load(data), vals=_load(vals), imm=imm)
    return _store(d)


# ----------------------------------------------------------------------------- selects


@nki.jit
def copy_predicated(dst0, src, pred, reverse):
    d = _load(dst0)
    nisa.tensor_copy_predicated(dst=d, src=_load(src), predicate=_load(pred), reverse_pred=reverse)
    return _store(d)


@nki.jit
def copy_predicated_scalar(dst0, value, pred):
    d = _load(dst0)
    nisa.tensor_copy_predicated(dst=d, src=value, predicate=_load(pred))
    return _store(d)


@nki.jit
def select_reduce(pred, on_true, on_false, reverse, rr_dtype, vector_false):
    """dst = where(pred, on_true, on_false) (on_false: number or [P,1] HBM tensor) + row max."""
    p = on_true.shape[0]
    d = nl.ndarray(on_true.shape, on_true.dtype, buffer=nl.sbuf)
    r = nl.ndarray((p, 1), rr_dtype, buffer=nl.sbuf)
    f = on_false
    if vector_false:
        f = _load(on_false)
    nisa.select_reduce(dst=d, predicate=_load(pred), on_true=_load(on_true), on_false=f,
                       reduce_res=r, reduce_cmd=nisa.reduce_cmd.reset_reduce,
                       reduce_op=nl.maximum, reverse_pred=reverse)
    return _store(d), _store(r)


@nki.jit
def select_reduce_running(pred, a, b):
    """Running max over two select_reduce calls (reset_reduce, then reduce), read out once."""
    p, f = a.shape
    pt = _load(pred)
    d = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=pt, on_true=_load(a), on_false=-1.0,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce)
    d2 = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    nisa.select_reduce(dst=d2, predicate=pt, on_true=_load(b), on_false=-1.0, reduce_res=r,
                       reduce_cmd=nisa.reduce_cmd.reduce)
    return _store(r)


@nki.jit
def select_plain(pred, on_true):
    """select_reduce without reduction (reduce_cmd idle, no reduce_res)."""
    d = nl.ndarray(on_true.shape, on_true.dtype, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=_load(pred), on_true=_load(on_true), on_false=7.0)
    return _store(d)


@nki.jit
def range_select(x, b0, b1, dst_dtype, range_start):
    """range_select(greater_equal bound0, less bound1) + row max into fp32 reduce_res."""
    p = x.shape[0]
    d = nl.ndarray(x.shape, dst_dtype, buffer=nl.sbuf)
    r = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    nisa.range_select(dst=d, on_true_tile=_load(x), comp_op0=nl.greater_equal, comp_op1=nl.less,
                      bound0=_load(b0), bound1=_load(b1), reduce_res=r, range_start=range_start)
    return _store(d), _store(r)


@nki.jit
def range_select_eq(x, b0, b1):
    """range_select(equal, less_equal) without reduce_res (defaults otherwise)."""
    d = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.range_select(dst=d, on_true_tile=_load(x), comp_op0=nl.equal, comp_op1=nl.less_equal,
                      bound0=_load(b0), bound1=_load(b1))
    return _store(d)


# ----------------------------------------------------------------------------- GpSimd


@nki.jit
def sequence_bounds(ids):
    d = nl.ndarray((1, 2, ids.shape[1]), ids.dtype, buffer=nl.sbuf)
    nisa.sequence_bounds(dst=d, segment_ids=_load(ids))
    return _store(d)


@nki.jit
def nonzero_with_count(x, dst0, index_offset, padding_val):
    d = _load(dst0)
    nisa.nonzero_with_count(dst=d, src=_load(x), index_offset=index_offset, padding_val=padding_val)
    return _store(d)


@nki.jit
def topk(x, v0, i0, n):
    """topk of x; val_dst / idx_dst start as copies of v0 [P, K] / i0 [P, K]."""
    v = _load(v0)
    i = _load(i0)
    nisa.topk(val_dst=v, idx_dst=i, src=_load(x), n=n)
    return _store(v), _store(i)


# ----------------------------------------------------------------------------- negatives
# Each kernel makes one call that must fail; the shapes/dtypes/buffers are arguments.


@nki.jit
def bad_max8(x, src_shape, dst_shape, dst_dtype):
    s = nl.ndarray(src_shape, nl.float32, buffer=nl.sbuf)
    d = nl.ndarray(dst_shape, dst_dtype, buffer=nl.sbuf)
    nisa.max8(dst=d, src=s)  # E:max8
    return x


@nki.jit
def bad_find_index8(x, data_shape, vals_shape, dst_dtype):
    s = nl.ndarray(data_shape, nl.float32, buffer=nl.sbuf)
    v = nl.ndarray(vals_shape, nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((data_shape[0], 8), dst_dtype, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=d, data=s, vals=v)  # E:find
    return x


@nki.jit
def bad_match_replace8(x, idx_dtype, imm_is_tensor):
    s = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    v = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    i = nl.ndarray((128, 8), idx_dtype, buffer=nl.sbuf)
    imm = 0.0
    if imm_is_tensor:
        imm = v
    nisa.nc_match_replace8(dst=s, data=s, vals=v, imm=imm, dst_idx=i)  # E:match
    return x


@nki.jit
def bad_copy_predicated(x, src_dtype, pred_dtype, pred_parts, both_psum):
    d = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    s = nl.ndarray((128, 64), src_dtype, buffer=nl.sbuf)
    p = nl.ndarray((pred_parts, 64), pred_dtype, buffer=nl.sbuf)
    if both_psum:
        s = nl.ndarray((128, 64), src_dtype, buffer=nl.psum)
        p = nl.ndarray((pred_parts, 64), pred_dtype, buffer=nl.psum)
    nisa.tensor_copy_predicated(dst=d, src=s, predicate=p)  # E:copy
    return x


@nki.jit
def bad_select_reduce(x, pred_dtype, true_dtype, on_false_shape, rr_dtype, in_psum):
    d = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    p = nl.ndarray((128, 64), pred_dtype, buffer=nl.sbuf)
    t = nl.ndarray((128, 64), true_dtype, buffer=nl.sbuf)
    if in_psum:
        p = nl.ndarray((128, 64), pred_dtype, buffer=nl.psum)
        t = nl.ndarray((128, 64), true_dtype, buffer=nl.psum)
    f = nl.ndarray(on_false_shape, nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 1), rr_dtype, buffer=nl.sbuf)
    nisa.select_reduce(dst=d, predicate=p, on_true=t, on_false=f, reduce_res=r)  # E:select
    return x


@nki.jit
def bad_select_reduce_args(x, use_add, use_load):
    d = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    p = nl.ndarray((128, 64), nl.uint8, buffer=nl.sbuf)
    op = nl.maximum
    cmd = nisa.reduce_cmd.reset_reduce
    if use_add:
        op = nl.add
    if use_load:
        cmd = nisa.reduce_cmd.load_reduce
    nisa.select_reduce(dst=d, predicate=p, on_true=d, on_false=0.0, reduce_op=op, reduce_cmd=cmd)  # E:selargs
    return x


@nki.jit
def bad_range_select(x, bound_dtype, true_dtype, fill, cmp_ne, start):
    d = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    t = nl.ndarray((128, 64), true_dtype, buffer=nl.sbuf)
    b = nl.ndarray((128, 1), bound_dtype, buffer=nl.sbuf)
    c = nl.less
    if cmp_ne:
        c = nl.not_equal
    nisa.range_select(dst=d, on_true_tile=t, comp_op0=c, comp_op1=nl.less, bound0=b, bound1=b, on_false_value=fill, range_start=start)  # E:range
    return x


@nki.jit
def bad_sequence_bounds(x, ids_shape, dst_shape, dtype):
    s = nl.ndarray(ids_shape, dtype, buffer=nl.sbuf)
    d = nl.ndarray(dst_shape, dtype, buffer=nl.sbuf)
    nisa.sequence_bounds(dst=d, segment_ids=s)  # E:seq
    return x


@nki.jit
def bad_nonzero(x, dst_shape, dst_dtype, src_dtype, in_psum):
    s = nl.ndarray((128, 64), src_dtype, buffer=nl.sbuf)
    d = nl.ndarray(dst_shape, dst_dtype, buffer=nl.sbuf)
    if in_psum:
        d = nl.ndarray(dst_shape, dst_dtype, buffer=nl.psum)
    nisa.nonzero_with_count(dst=d, src=s)  # E:nonzero
    return x


@nki.jit
def bad_topk(x, src_shape, src_dtype, k, idx_dtype, n):
    s = nl.ndarray(src_shape, src_dtype, buffer=nl.sbuf)
    v = nl.ndarray((src_shape[0], k), nl.bfloat16, buffer=nl.sbuf)
    i = nl.ndarray((src_shape[0], k), idx_dtype, buffer=nl.sbuf)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=n)  # E:topk
    return x
