"""Kernels of our own exercising the vector-family instructions (used by test_isa_vector.py).

Op tokens are chosen with compile-time string arguments looked up in :data:`OPS`; every
kernel loads its inputs with ``dma_copy``, runs the instruction(s) under test and returns
``shared_hbm`` outputs.  :func:`bad` holds one failing call per error condition, each
marked ``# E:<case>`` so the test can find the line the error must point at.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

OPS = {"add": nl.add, "subtract": nl.subtract, "multiply": nl.multiply, "divide": nl.divide,
       "maximum": nl.maximum, "minimum": nl.minimum, "abs_max": nl.abs_max, "abs_min": nl.abs_min,
       "bypass": nl.bypass, "average": nl.average, "bitwise_or": nl.bitwise_or,
       "bitwise_and": nl.bitwise_and, "greater": nl.greater, "max": nl.max}
ACTS = {"copy": nl.copy, "exp": nl.exp, "gelu": nl.gelu, "tanh": nl.tanh, "prelu": nl.prelu,
        "square": nl.square, "relu": nl.relu}
DTYPES = {"float32": nl.float32, "bfloat16": nl.bfloat16}
CMDS = {"idle": nisa.reduce_cmd.idle, "reset": nisa.reduce_cmd.reset,
        "reduce": nisa.reduce_cmd.reduce, "reset_reduce": nisa.reduce_cmd.reset_reduce,
        "load_reduce": nisa.reduce_cmd.load_reduce}


def _load(src):
    t = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


def _store(t):
    out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def stt(x, y, s, op0, op1, rev0, rev1, vec, in_psum):
    """(x op0 s) op1 y; s is the [P, 1] tile when vec else the scalar 1.5; y read from PSUM
    (through a tensor_copy) when in_psum."""
    p, f = x.shape
    tx, ts = _load(x), _load(s)
    ty = _load(y)
    if in_psum:
        py = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=py, src=ty)
        ty = py
    r = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    if vec:
        nisa.scalar_tensor_tensor(dst=r, data=tx, op0=OPS[op0], operand0=ts, op1=OPS[op1],
                                  operand1=ty, reverse0=rev0, reverse1=rev1)
    else:
        nisa.scalar_tensor_tensor(dst=r, data=tx, op0=OPS[op0], operand0=1.5, op1=OPS[op1],
                                  operand1=ty, reverse0=rev0, reverse1=rev1)
    return _store(r)


@nki.jit
def partition_reduce(x, op):
    """out[1, F...] (x's dtype) = op over the partitions of x."""
    tx = _load(x)
    shape = (1,) + tuple(x.shape[1:])
    r = nl.ndarray(shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_partition_reduce(dst=r, op=OPS[op], data=tx)
    return _store(r)


@nki.jit
def scalar_reduce(x, init, op0, rop, chunks, first_cmd, negate):
    """dst = x op0 2.0 over `chunks` free-dim chunks; the first chunk uses `first_cmd`
    (reset_reduce / load_reduce from init[P, 1]), the others reduce; reduce_res after the last."""
    p, f = x.shape
    w = f // chunks
    tx, ti = _load(x), _load(init)
    d = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    res = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    for c in range(chunks):
        cmd = first_cmd if c == 0 else "reduce"
        rr = res if c == chunks - 1 else None
        ri = ti if cmd == "load_reduce" else None
        nisa.tensor_scalar_reduce(dst=d[:, c * w:(c + 1) * w], data=tx[:, c * w:(c + 1) * w],
                                  op0=OPS[op0], operand0=2.0, reduce_op=OPS[rop], reduce_res=rr,
                                  reduce_cmd=CMDS[cmd], reduce_init=ri, reduce_res_negate=negate)
    return _store(d), _store(res)


@nki.jit
def cumulative(x, imm1, op0, op1, first_cmd, split):
    """Scan of (x op0 0.5) with op1; the free dim is processed in `split` instructions,
    the first with `first_cmd` (reset_reduce, or load_reduce from imm1[P, 1]), the rest with
    reduce (continuing from the VectorE accumulator)."""
    p, f = x.shape
    w = f // split
    tx, t1 = _load(x), _load(imm1)
    d = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    for c in range(split):
        if c == 0 and first_cmd == "load_reduce":
            nisa.tensor_scalar_cumulative(dst=d[:, 0:w], src=tx[:, 0:w], op0=OPS[op0],
                                          op1=OPS[op1], imm0=0.5, imm1=t1,
                                          reduce_cmd=nisa.reduce_cmd.load_reduce)
        elif c == 0:
            nisa.tensor_scalar_cumulative(dst=d[:, 0:w], src=tx[:, 0:w], op0=OPS[op0],
                                          op1=OPS[op1], imm0=0.5)
        else:
            nisa.tensor_scalar_cumulative(dst=d[:, c * w:(c + 1) * w], src=tx[:, c * w:(c + 1) * w],
                                          op0=OPS[op0], op1=OPS[op1], imm0=0.5,
                                          reduce_cmd=nisa.reduce_cmd.reduce)
    return _store(d)


@nki.jit
def scan(a, b, init, op0, op1, rev0, rev1, vec):
    """tensor_tensor_scan(a, b) with initial init[P, 1] (vec) or the scalar -0.25."""
    ta, tb, ti = _load(a), _load(b), _load(init)
    d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    if vec:
        nisa.tensor_tensor_scan(dst=d, data0=ta, data1=tb, initial=ti, op0=OPS[op0],
                                op1=OPS[op1], reverse0=rev0, reverse1=rev1)
    else:
        nisa.tensor_tensor_scan(dst=d, data0=ta, data1=tb, initial=-0.25, op0=OPS[op0],
                                op1=OPS[op1], reverse0=rev0, reverse1=rev1)
    return _store(d)


@nki.jit
def bn(x, stats_dtype):
    """bn_stats of x (<= 512 free elements) into a `stats_dtype` ("float32" / "bfloat16")
    tile, and bn_aggr of that."""
    p = x.shape[0]
    tx = _load(x)
    st = nl.ndarray((p, 6), dtype=DTYPES[stats_dtype], buffer=nl.sbuf)
    nisa.bn_stats(dst=st, data=tx)
    mv = nl.ndarray((p, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_aggr(dst=mv, data=st)
    return _store(st), _store(mv)


@nki.jit
def exponential(x, m, vec, chunks, first_cmd):
    """dst = exp(x - m) (m the [P, 1] tile when vec, else 0.5) over `chunks` chunks; the
    first with `first_cmd` (reset_reduce / load_reduce from 1.0 / idle + reduce_res), the
    rest reduce; the running sum is read out after the last chunk."""
    p, f = x.shape
    w = f // chunks
    tx, tm = _load(x), _load(m)
    d = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    s = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    mv = tm if vec else 0.5
    for c in range(chunks):
        rr = s if c == chunks - 1 else None
        if c > 0:
            nisa.exponential(dst=d[:, c * w:(c + 1) * w], src=tx[:, c * w:(c + 1) * w],
                             max_value=mv, reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reduce)
        elif first_cmd == "load_reduce":
            nisa.exponential(dst=d[:, 0:w], src=tx[:, 0:w], max_value=mv, reduce_res=rr,
                             reduce_cmd=nisa.reduce_cmd.load_reduce, reduce_init=1.0)
        elif first_cmd == "idle":
            nisa.exponential(dst=d[:, 0:w], src=tx[:, 0:w], max_value=mv, reduce_res=rr)
        else:
            nisa.exponential(dst=d[:, 0:w], src=tx[:, 0:w], max_value=mv, reduce_res=rr,
                             reduce_cmd=nisa.reduce_cmd.reset_reduce)
    return _store(d), _store(s)


@nki.jit
def activate2(x, s, op, op0, op1, rev0, rev1, rop, relu, vec):
    """dst = op((x op0 imm0) op1 imm1, relu_param) with imm0 = s[P, 1] (vec) or 1.5,
    imm1 = -0.5; reduce_op over two halves (reset_reduce, then reduce + readout)."""
    p, f = x.shape
    h = f // 2
    tx, ts = _load(x), _load(s)
    d = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    i0 = ts if vec else 1.5
    nisa.activate2(dst=d[:, 0:h], op=ACTS[op], data=tx[:, 0:h], imm0=i0, imm1=-0.5,
                   op0=OPS[op0], op1=OPS[op1], relu_param=relu, reverse0=rev0, reverse1=rev1,
                   reduce_op=OPS[rop], reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.activate2(dst=d[:, h:f], op=ACTS[op], data=tx[:, h:f], imm0=i0, imm1=-0.5,
                   op0=OPS[op0], op1=OPS[op1], relu_param=relu, reverse0=rev0, reverse1=rev1,
                   reduce_op=OPS[rop], reduce_res=r, reduce_cmd=nisa.reduce_cmd.reduce)
    return _store(d), _store(r)


@nki.jit
def act_accumulators(x, with_activate2):
    """ScalarE accumulators across instructions: activation(exp) over three chunks with
    reset_reduce / reduce / (idle: no change), readouts after each; then reset + readout.
    With with_activate2 (trn3), an activate2 (copy, add-reduce) continues the same sum."""
    p, f = x.shape
    w = f // 4
    tx = _load(x)
    e = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((p, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e[:, 0:w], op=nl.exp, data=tx[:, 0:w], reduce_op=nl.add,
                    reduce_res=r[:, 0:1], reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.activation(dst=e[:, w:2 * w], op=nl.exp, data=tx[:, w:2 * w], reduce_op=nl.add,
                    reduce_cmd=nisa.reduce_cmd.reduce)
    nisa.activation(dst=e[:, 2 * w:3 * w], op=nl.exp, data=tx[:, 2 * w:3 * w])
    if with_activate2:
        nisa.activate2(dst=e[:, 3 * w:f], op=nl.copy, data=tx[:, 3 * w:f], imm0=0.0, imm1=0.0,
                       op0=nl.bypass, op1=nl.bypass, reduce_op=nl.add, reduce_res=r[:, 1:2],
                       reduce_cmd=nisa.reduce_cmd.reduce)
    else:
        nisa.activation(dst=e[:, 3 * w:f], op=nl.copy, data=tx[:, 3 * w:f], reduce_op=nl.add,
                        reduce_res=r[:, 1:2], reduce_cmd=nisa.reduce_cmd.reduce)
    nisa.activation(dst=e[:, 0:w], op=nl.exp, data=tx[:, 0:w], reduce_op=nl.add,
                    reduce_res=r[:, 2:3], reduce_cmd=nisa.reduce_cmd.reset)
    nisa.activation(dst=e[:, 0:w], op=nl.exp, data=tx[:, 0:w], reduce_op=nl.add,
                    reduce_res=r[:, 3:4])
    return _store(e), _store(r)


@nki.jit
def bad(x, case):
    """One failing call per error condition of the vector family (x: [128, 600] fp32)."""
    t = _load(x)
    d = nl.ndarray((128, 600), dtype=nl.float32, buffer=nl.sbuf)
    v = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    ps2 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    i32 = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.sbuf)
    if case == "bn_big":
        nisa.bn_stats(dst=d[:, 0:6], data=t)  # E:bn_big
    elif case == "bn_dst":
        nisa.bn_stats(dst=d[:, 0:4], data=t[:, 0:512])  # E:bn_dst
    elif case == "aggr_mod3":
        nisa.bn_aggr(dst=d[:, 0:2], data=t[:, 0:7])  # E:aggr_mod3
    elif case == "aggr_dst":
        nisa.bn_aggr(dst=d[:, 0:3], data=t[:, 0:6])  # E:aggr_dst
    elif case == "tpr_psum":
        nisa.tensor_partition_reduce(dst=d[0:1, 0:512], op=nl.add, data=ps)  # E:tpr_psum
    elif case == "tpr_parts":
        nisa.tensor_partition_reduce(dst=d[:, 0:600], op=nl.add, data=t)  # E:tpr_parts
    elif case == "tpr_free":
        nisa.tensor_partition_reduce(dst=d[0:1, 0:8], op=nl.add, data=t)  # E:tpr_free
    elif case == "tpr_bitwise":
        nisa.tensor_partition_reduce(dst=d[0:1, :], op=nl.bitwise_or, data=t)  # E:tpr_bitwise
    elif case == "tpr_op":
        nisa.tensor_partition_reduce(dst=d[0:1, :], op=nl.multiply, data=t)  # E:tpr_op
    elif case == "tsr_reverse":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=v, reverse0=True)  # E:tsr_reverse
    elif case == "tsr_init":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=v, reduce_init=v)  # E:tsr_init
    elif case == "tsr_load":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=v, reduce_cmd=nisa.reduce_cmd.load_reduce)  # E:tsr_load
    elif case == "tsr_res":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=d[:, 0:2])  # E:tsr_res
    elif case == "tsr_rop":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.subtract, reduce_res=v)  # E:tsr_rop
    elif case == "tsr_cmd":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=v, reduce_cmd=nisa.reduce_cmd.idle)  # E:tsr_cmd
    elif case == "tsr_operand":
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=i32[:, 0:1], reduce_op=nl.add, reduce_res=v)  # E:tsr_operand
    elif case == "cum_int32":
        nisa.tensor_scalar_cumulative(dst=i32, src=i32, op0=nl.add, op1=nl.add, imm0=1.0)  # E:cum_int32
    elif case == "cum_load":
        nisa.tensor_scalar_cumulative(dst=d, src=t, op0=nl.add, op1=nl.add, imm0=1.0, reduce_cmd=nisa.reduce_cmd.load_reduce)  # E:cum_load
    elif case == "cum_op1":
        nisa.tensor_scalar_cumulative(dst=d, src=t, op0=nl.add, op1=nl.divide, imm0=1.0)  # E:cum_op1
    elif case == "stt_bitvec":
        nisa.scalar_tensor_tensor(dst=d, data=t, op0=nl.bitwise_and, operand0=1.0, op1=nl.add, operand1=t)  # E:stt_bitvec
    elif case == "stt_psum":
        nisa.scalar_tensor_tensor(dst=d[:, 0:512], data=ps, op0=nl.add, operand0=1.0, op1=nl.add, operand1=ps2)  # E:stt_psum
    elif case == "stt_operand0":
        nisa.scalar_tensor_tensor(dst=d, data=t, op0=nl.add, operand0=d[:, 0:2], op1=nl.add, operand1=t)  # E:stt_operand0
    elif case == "stt_shape":
        nisa.scalar_tensor_tensor(dst=d, data=t, op0=nl.add, operand0=1.0, op1=nl.add, operand1=t[:, 0:512])  # E:stt_shape
    elif case == "scan_psum":
        nisa.tensor_tensor_scan(dst=d[:, 0:512], data0=ps, data1=ps2, initial=0.0, op0=nl.multiply, op1=nl.add)  # E:scan_psum
    elif case == "scan_initial":
        nisa.tensor_tensor_scan(dst=d, data0=t, data1=t, initial=d[0:64, 0:1], op0=nl.multiply, op1=nl.add)  # E:scan_initial
    elif case == "exp_target":
        nisa.exponential(dst=d, src=t, max_value=v)  # E:exp_target
    elif case == "exp_init":
        nisa.exponential(dst=d, src=t, reduce_res=v, reduce_init=2.0)  # E:exp_init
    elif case == "act2_target":
        nisa.activate2(dst=d, op=nl.exp, data=t, imm0=1.0, imm1=0.0, op0=nl.multiply, op1=nl.add)  # E:act2_target
    elif case == "act2_pair":
        nisa.activate2(dst=d, op=nl.exp, data=t, imm0=1.0, imm1=0.0, op0=nl.add, op1=nl.multiply)  # E:act2_pair
    elif case == "act2_rop":
        nisa.activate2(dst=d, op=nl.exp, data=t, imm0=1.0, imm1=0.0, op0=nl.multiply, op1=nl.add, reduce_res=v)  # E:act2_rop
    elif case == "act2_rev":
        nisa.activate2(dst=d, op=nl.exp, data=t, imm0=1.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass, reverse0=True)  # E:act2_rev
    elif case == "act2_reduce_op":
        nisa.activate2(dst=d, op=nl.exp, data=t, imm0=1.0, imm1=0.0, op0=nl.multiply, op1=nl.add, reduce_op=nl.multiply, reduce_res=v)  # E:act2_reduce_op
    elif case == "act_load":
        nisa.activation(dst=d, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=v, reduce_cmd=nisa.reduce_cmd.load_reduce)  # E:act_load
    return _store(d)
