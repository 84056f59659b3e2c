"""Kernels of our own for test_views.py and test_indirect_dma.py (NkiTensor views,
nki_spec.md section 2.5).  Kept in a file: the frontend reads kernel source."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


# ------------------------------------------------------------------ HBM-side views (DMA)


@nki.jit
def hbm_permute(x):
    """x [A, B, C] -> out [C, A, B] = x.transpose(2, 0, 1), one HBM->HBM DMA."""
    a, b, c = x.shape
    out = nl.ndarray((c, a, b), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x.permute((2, 0, 1)))
    return out


@nki.jit
def hbm_broadcast_rows(g):
    """g [1, F] -> out [128, F]: every partition gets g (stride-0 broadcast DMA)."""
    out = nl.ndarray((128, g.shape[1]), g.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, g.shape[1]), g.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=g.broadcast(0, 128))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def hbm_view_chain(x):
    """x [8, 64, 32]: x.select(0, 3).slice(1, 4, 20, 2).permute(1, 0) -> [8, 64]; then
    reshape_dim / flatten_dims round trip -> out [8, 64]."""
    v = x.select(0, 3).slice(1, 4, 20, 2).permute((1, 0))
    v = v.reshape_dim(1, (8, -1)).flatten_dims(1, 2)
    out = nl.ndarray(v.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def hbm_rearrange(x):
    """x [128, 64] -> 'p (a b) -> p b a' with a=4 -> out [128, 16, 4]."""
    out = nl.ndarray((128, 16, 4), x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 16, 4), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.rearrange("p (a b)", "p b a", {"a": 4}))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def hbm_reshape_expand(x):
    """x [128, 64] -> reshape (2, 64, 64) -> expand_dim(1) -> squeeze_dim(1) -> out [2, 64, 64]."""
    v = x.reshape((2, 64, 64)).expand_dim(1).squeeze_dim(1)
    out = nl.ndarray(v.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def hbm_ap_blocks(x):
    """x [4, 128, 32]: block i read with ap(scalar_offset=i) in an affine loop; out = x."""
    nb, p, f = x.shape
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(nb):
        t = nl.ndarray((p, f), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[f, p], [1, f]], offset=0, scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out[i], src=t)
    return out


@nki.jit
def hbm_select_dynamic(x, which):
    """x [8, 128, 64], which [1, 1] int32: out = x[which[0, 0]] (index read at run time)."""
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=which)
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.select(0, idx))
    out = nl.ndarray((128, 64), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def hbm_write_through_view(x):
    """Writes through a permuted view of the output land in it: out [64, 128] = x.T."""
    out = nl.ndarray((64, 128), x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out.permute((1, 0)), src=t)
    return out


# --------------------------------------------------------------- on-chip views (compute)


@nki.jit
def sbuf_permute_free(x):
    """x [128, 8, 16] -> per-partition transpose out [128, 16, 8] via tensor_copy of a view."""
    t = nl.ndarray((128, 8, 16), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((128, 16, 8), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t.permute((0, 2, 1)))
    out = nl.ndarray((128, 16, 8), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def sbuf_broadcast_add(x, v):
    """out[p, f] = x[p, f] + v[p, 0]: v [128, 1] broadcast along the free dim (stride 0)."""
    tx = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    tv = nl.ndarray(v.shape, v.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tx, src=x)
    nisa.dma_copy(dst=tv, src=v)
    y = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=tx, data2=tv.broadcast(1, x.shape[1]), op=nl.add)
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def sbuf_reshape_permute(x):
    """x [P, 64] -> reshape (P, 8, 8) -> permute (0, 2, 1): out [P, 8, 8] = per-row 8x8 transpose."""
    p = x.shape[0]
    t = nl.ndarray((p, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((p, 8, 8), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t.reshape((p, 8, 8)).permute((0, 2, 1)))
    out = nl.ndarray((p, 8, 8), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def sbuf_ap_odd(x):
    """x [128, 64] -> out [128, 32] = x[:, 1::2] written with ap([[64, 128], [2, 32]], offset=1)."""
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((128, 32), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t.ap([[64, 128], [2, 32]], offset=1))
    out = nl.ndarray((128, 32), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def sbuf_ap_partitions(x):
    """x [128, 64] -> out [32, 16] = x[64:96, 8:24] as ap([[64, 32], [1, 16]], offset=64*64+8)."""
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((32, 16), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t[0:64, :].ap([[64, 32], [1, 16]], offset=64 * 64 + 8))
    out = nl.ndarray((32, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def sbuf_write_through_view(x):
    """tensor_copy into a strided view of a tile: out [128, 64] has x [128, 32] in the even
    columns and 0 in the odd ones."""
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    tx = nl.ndarray((128, 32), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tx, src=x)
    nisa.tensor_copy(dst=t.reshape_dim(1, (32, 2)).select(2, 0), src=tx)
    out = nl.ndarray((128, 64), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def bitcast(x, dtype):
    """out = x's bytes as ``dtype`` (view(dtype) on the SBUF tile; DMA has no dtype change)."""
    p, f = x.shape
    t = nl.ndarray((p, f), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    v = t.view(dtype)
    out = nl.ndarray(v.shape, dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def hbm_bitcast_slice(x):
    """x [128, 64] int32 -> out [128, 32] bf16 = bytes of columns 8..24 as bf16 (HBM view)."""
    v = x[:, 8:24].view(nl.bfloat16)
    out = nl.ndarray(v.shape, nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def sbuf_ap_dtype(x):
    """x [128, 64] int32 tile read with ap(dtype=bfloat16): [[128, 128], [1, 128]] -> [128, 128] bf16."""
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray((128, 128), nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t.ap([[128, 128], [1, 128]], dtype=nl.bfloat16))
    return out


@nki.jit
def queries(x):
    """Compile-time queries: get_pattern / is_contiguous; out = x (asserts checked while compiling)."""
    t = nl.ndarray((128, 8, 16), x.dtype, buffer=nl.sbuf)
    assert t.get_pattern() == [[128, 128], [16, 8], [1, 16]]
    assert t.is_contiguous()
    assert not t.permute((0, 2, 1)).is_contiguous()
    assert t[64:128, :, :].is_contiguous()
    assert not t[:, :, 0:8].is_contiguous()
    assert t.permute((0, 2, 1)).get_pattern() == [[128, 128], [1, 16], [16, 8]]
    assert x.slice(1, 0, 16, 2).get_pattern() == [[128, 128], [2, 8]]
    assert not x.is_indirect()
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


# ---------------------------------------------------------------------- indirect DMA


@nki.jit
def gather_ap(table, idx):
    """out[i, :] = table[idx[i, 0], :]: table [V, D] in HBM, idx [P, 1] int32."""
    p = idx.shape[0]
    d = table.shape[1]
    ix = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    g = nl.ndarray((p, d), table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=table.ap([[d, p], [1, d]], offset=0, vector_offset=ix, indirect_dim=0))
    out = nl.ndarray((p, d), table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=g)
    return out


@nki.jit
def gather_select(table, idx, how):
    """Same gather through table.vector_select(0, ix) or table.select(0, ix); with
    ``how == 'skip'`` out-of-bounds rows are skipped (left 0)."""
    p = idx.shape[0]
    d = table.shape[1]
    ix = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    g = nl.ndarray((p, d), table.dtype, buffer=nl.sbuf)
    nisa.memset(dst=g, value=0.0)
    if how == "vector_select":
        nisa.dma_copy(dst=g, src=table.vector_select(0, ix))
    elif how == "select":
        nisa.dma_copy(dst=g, src=table.select(0, ix))
    else:
        nisa.dma_copy(dst=g, src=table.vector_select(0, ix), oob_mode=nisa.oob_mode.skip)
    out = nl.ndarray((p, d), table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=g)
    return out


@nki.jit
def scatter_rows(table, rows, idx):
    """out = table; out[idx[i, 0], :] = rows[i, :] (scatter SBUF -> HBM)."""
    p, d = rows.shape
    out = nl.ndarray(table.shape, table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=table)
    ix = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    r = nl.ndarray((p, d), rows.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=r, src=rows)
    nisa.dma_copy(dst=out.ap([[d, p], [1, d]], offset=0, vector_offset=ix, indirect_dim=0), src=r)
    return out


@nki.jit
def gather_subscript(table, idx):
    """out = table[idx[:, 0]] written as a subscript table[ix] (ix an SBUF [P, 1] tensor)."""
    p = idx.shape[0]
    ix = nl.ndarray((p, 1), idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    g = nl.ndarray((p, table.shape[1]), table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=table[ix])
    out = nl.ndarray(g.shape, table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=g)
    return out


@nki.jit
def select_subscript(x, which):
    """x [8, 128, 64], which [1, 1] int32: out = x[which[0, 0], :, 16:48] via x[w, :, 16:48]."""
    w = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w, src=which)
    t = nl.ndarray((128, 32), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[w, :, 16:48])
    out = nl.ndarray((128, 32), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


# ------------------------------------------------------------ mistakes (one per line)


@nki.jit
def bad_view(x, case):
    """x [128, 64] float32 in HBM; each ``case`` makes one view mistake on its own line."""
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    c = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
    ix = nl.ndarray((128, 1), nl.int32, buffer=nl.sbuf)
    fx = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
    if case == "dim_range":
        v = t.select(5, 0)
    elif case == "permute_partition":
        v = t.reshape((128, 8, 8)).permute((1, 0, 2))
    elif case == "permute_not_perm":
        v = x.permute((0, 0))
    elif case == "broadcast_partition":
        v = c.broadcast(0, 4)
    elif case == "broadcast_size":
        v = t.broadcast(1, 4)
    elif case == "expand_partition":
        v = t.expand_dim(0)
    elif case == "squeeze_partition":
        v = t[0:1, :].squeeze_dim(0)
    elif case == "squeeze_size":
        v = t.squeeze_dim(1)
    elif case == "squeeze_rank":
        v = c.squeeze_dim(1)
    elif case == "too_many_dims":
        v = x.reshape((2, 2, 2, 2, 2, 256))
    elif case == "reshape_count":
        v = x.reshape((128, 65))
    elif case == "reshape_partition":
        v = t.reshape((64, 128))
    elif case == "reshape_noncontig":
        v = x.permute((1, 0)).reshape((8192,))
    elif case == "reshape_dim_partition":
        v = t.reshape_dim(0, (2, 64))
    elif case == "flatten_partition":
        v = t.flatten_dims(0, 1)
    elif case == "flatten_noncontig":
        v = x.reshape((128, 8, 8)).permute((0, 2, 1)).flatten_dims(1, 2)
    elif case == "slice_bounds":
        v = x.slice(1, 0, 65)
    elif case == "slice_partition_step":
        v = t.slice(0, 0, 128, 2)
    elif case == "select_bounds":
        v = x.select(0, 128)
    elif case == "select_dynamic_partition":
        for i in nl.dynamic_range(4):  # a runtime index (an affine_range index is an int per iteration)
            v = t.select(0, i)
    elif case == "rearrange_axes":
        v = x.rearrange("p (a b)", "p a c", {"a": 4})
    elif case == "rearrange_partition":
        v = t.rearrange("p (a b)", "a p b", {"a": 4})
    elif case == "rearrange_sizes":
        v = t.rearrange("p (a b)", "p b a", 4)
    elif case == "view_noncontig":
        v = x.slice(1, 0, 64, 2).view(nl.bfloat16)
    elif case == "view_size":
        v = x.view(nl.float8_e4m3)[:, 0:5].view(nl.float32)
    elif case == "ap_partition_step":
        v = t.ap([[128, 64], [1, 64]])
    elif case == "ap_bounds":
        v = x.ap([[64, 128], [1, 64]], offset=1)
        nisa.dma_copy(dst=t, src=v)  # the out-of-storage view used
    elif case == "ap_vector_onchip":
        v = t.ap([[64, 128], [1, 64]], vector_offset=ix)
    elif case == "ap_vector_dim":
        v = x.ap([[64, 128], [1, 64]], vector_offset=ix, indirect_dim=1)
    elif case == "ap_index_dtype":
        v = x.ap([[64, 128], [1, 64]], vector_offset=fx)
    elif case == "ap_both_offsets":
        v = x.ap([[64, 128], [1, 64]], scalar_offset=1, vector_offset=ix)
    elif case == "vector_select_onchip":
        v = t.vector_select(0, ix)
    elif case == "indirect_twice":
        v = x.vector_select(0, ix).slice(1, 0, 8)
    elif case == "indirect_compute":
        nisa.tensor_copy(dst=t, src=x.vector_select(0, ix))
    elif case == "indirect_rows":
        nisa.dma_copy(dst=t[0:64, :], src=x.vector_select(0, ix))
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def register_select(x, which, col):
    """x [8, 128, 64]: out [128, 16] = x[which, :, col:col+16] with which in a register
    (x.select) and col a compile-time offset added through ap(scalar_offset=register) on
    the SBUF free dim: t [128, 64] -> t.ap([[64, 128], [1, 16]], scalar_offset=r, indirect_dim=1)."""
    r = nisa.register_alloc(which)
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.select(0, r))
    c = nisa.register_alloc(col)
    y = nl.ndarray((128, 16), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t.ap([[64, 128], [1, 16]], scalar_offset=c, indirect_dim=1))
    out = nl.ndarray((128, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def sbuf_select_free_runtime(x, which):
    """x [128, 8, 64] in SBUF; out [128, 64] = x[:, which[0, 0], :] (dynamic free-dim select)."""
    t = nl.ndarray((128, 8, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    w = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w, src=which)
    y = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t.select(1, w))
    out = nl.ndarray((128, 64), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out
