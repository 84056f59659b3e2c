"""Engine registers and runtime (device) loops, end to end (nki_spec.md 2.1, 4.1, 4.2, 5.4).

Kernels of our own: a loop whose trip count is a register loaded from HBM (one compile, many
runtime counts), ``nl.fori_loop`` / ``nl.while_loop`` / ``while reg:`` / ``nl.no_reorder``,
register round trips, and one negative test (message + reported line) per rule.
References are plain NumPy / Python.
"""
import inspect

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIError, NKIRuntimeError, NKISyntaxError, NKITypeError, NKIVerifyError

FILE = inspect.getsourcefile(lambda: None)


def _i32(v):
    return np.array([[v]], np.int32)


# ============================================================================ kernels


@nki.jit
def repeat_add(x, count):
    """out = count * x (accumulated count times), isum = sum(range(count)) via the induction
    register; count is a [1, 1] int32 HBM tensor read at run time."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    isum_out = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    xt = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    acc = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    isum = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=isum, value=0)
    for i in nl.dynamic_range(n):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=xt, op=nl.add)
        iv = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.register_store(iv, i)
        nisa.tensor_tensor(dst=isum, data1=isum, data2=iv, op=nl.add)
    res = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    nisa.dma_copy(dst=isum_out, src=isum)
    return out, isum_out


@nki.jit
def ranged_sum(lo, hi, step):
    """sum(range(lo, hi, step)) with register bounds (dynamic_range and fori_loop)."""
    out = nl.ndarray((1, 2), nl.int32, buffer=nl.shared_hbm)
    a = nisa.register_alloc()
    nisa.register_load(a, lo)
    b_sb = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_sb, src=hi)
    b = nisa.register_alloc()
    nisa.register_load(b, b_sb)
    s1 = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=s1, value=0)
    s2 = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=s2, value=0)
    for i in nl.dynamic_range(a, b, step):
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.register_store(t, i)
        nisa.tensor_tensor(dst=s1, data1=s1, data2=t, op=nl.add)

    def body(j):
        u = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.register_store(u, j)
        nisa.tensor_tensor(dst=s2, data1=s2, data2=u, op=nl.add)

    nl.fori_loop(a, b, body, step=step)
    nisa.dma_copy(dst=out[:, 0:1], src=s1)
    nisa.dma_copy(dst=out[:, 1:2], src=s2)
    return out


@nki.jit
def fori_static_bounds(x):
    """fori_loop with int bounds: out = 5 * x."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    xt = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    acc = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)

    def body(i):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=xt, op=nl.add)

    nl.fori_loop(0, 5, body)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def countdown(start):
    """while_loop: r = start; while r != 0: r = r - 1 (through SBUF). out = [iterations,
    last value seen by the body]."""
    out = nl.ndarray((1, 2), nl.int32, buffer=nl.shared_hbm)
    init = nisa.register_alloc()
    nisa.register_load(init, start)
    cnt = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=cnt, value=0)
    last = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=last, value=-1)
    one = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=one, value=1)
    nxt = nisa.register_alloc()

    def body(r):
        nisa.register_store(last, r)
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=t, data1=last, data2=one, op=nl.subtract)
        nisa.tensor_tensor(dst=cnt, data1=cnt, data2=one, op=nl.add)
        nisa.register_load(nxt, t)
        return nxt

    nl.while_loop(init, body)
    nisa.dma_copy(dst=out[:, 0:1], src=cnt)
    nisa.dma_copy(dst=out[:, 1:2], src=last)
    return out


@nki.jit
def while_register(start, x):
    """``while reg:`` counting down from start; out = start * x; tensors made inside
    ``no_reorder`` stay visible after it."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    r = nisa.register_alloc()
    nisa.register_load(r, start)
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=start)
    with nl.no_reorder():
        one = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=one, value=1)
        xt = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x)
        acc = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
    while r:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=xt, op=nl.add)
        nisa.tensor_tensor(dst=t, data1=t, data2=one, op=nl.subtract)
        nisa.register_load(r, t)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def register_roundtrip(a_f32, a_i16, a_u8):
    """register_alloc(x) / move / load / store: out[0, :] = [7, 7, bits(a_f32) as f32 back,
    a_i16 sign-extended, a_u8 zero-extended, -1 wrapped into uint8]."""
    out_i = nl.ndarray((1, 4), nl.int32, buffer=nl.shared_hbm)
    out_f = nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
    out_u = nl.ndarray((1, 1), nl.uint8, buffer=nl.shared_hbm)
    r = nisa.register_alloc(7)
    q = nisa.register_alloc()
    nisa.register_move(q, r)
    nisa.register_store(out_i[:, 0:1], q)
    nisa.register_move(q, 7)
    nisa.register_store(out_i[:, 1:2], q)
    f = nisa.register_alloc()
    nisa.register_load(f, a_f32)
    f_sb = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    nisa.register_store(f_sb, f)
    nisa.dma_copy(dst=out_f, src=f_sb)
    nisa.register_load(q, a_i16)
    nisa.register_store(out_i[:, 2:3], q)
    nisa.register_load(q, a_u8)
    nisa.register_store(out_i[:, 3:4], q)
    nisa.register_move(q, -1)
    nisa.register_store(out_u, q)
    return out_i, out_f, out_u


@nki.jit
def exp_rows(x, count):
    """out[i] = exp(x[i]) for i < count (rows addressed with .ap(scalar_offset=i)), 0 after."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), x.dtype, buffer=nl.shared_hbm)
    z = nl.ndarray((rows, cols), x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0.0)
    nisa.dma_copy(dst=out, src=z)
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    for i in nl.dynamic_range(n):
        row = nl.ndarray((1, cols), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x.ap([[cols, 1], [1, cols]], scalar_offset=i))  # exp_rows read
        nisa.activation(dst=row, op=nl.exp, data=row)
        nisa.dma_copy(dst=out.ap([[cols, 1], [1, cols]], scalar_offset=i), src=row)
    return out


@nki.jit
def row_at(x, index):
    """out = x[index] with index a (1, 1) int32 SBUF tensor (scalar_index's tensor path)."""
    rows, cols = x.shape
    out = nl.ndarray((1, cols), x.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=index)
    nisa.dma_copy(dst=out, src=x.ap([[cols, 1], [1, cols]], scalar_offset=idx))
    return out


@nki.jit
def spin(flag):
    """A while loop whose condition never changes: runaway."""
    out = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
    r = nisa.register_alloc()
    nisa.register_load(r, flag)
    while r:
        nisa.register_load(r, flag)
    nisa.dma_copy(dst=out, src=flag)
    return out


# ============================================================================ numerics


@pytest.mark.parametrize("shape", [(128, 64), (1, 1), (32, 512)])
def test_runtime_trip_count_one_compile(shape, monkeypatch):
    """The count is data: one compile serves every runtime count."""
    from nki_mlir.driver import compile as compiler  # where compile_kernel looks names up
    builds = []
    real = compiler.build_module
    monkeypatch.setattr(compiler, "build_module", lambda *a, **k: builds.append(1) or real(*a, **k))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    first = repeat_add.compile(x, _i32(0))
    for n in (0, 1, 2, 5, 13):
        assert repeat_add.compile(x, _i32(n)) is first
        out, isum = repeat_add(x, _i32(n))
        ref = np.zeros(shape, np.float32)
        for _ in range(n):
            ref = ref + x
        np.testing.assert_allclose(out, ref, rtol=1e-6)
        assert isum[0, 0] == sum(range(n))
    assert len(builds) == 1
    assert 'nki.range = "dynamic"' in first.ir("nisa")


def test_runtime_trip_count_bf16():
    x = (np.arange(128 * 8).reshape(128, 8) % 7).astype(nl.bfloat16)
    for n in (0, 3):
        out, _ = repeat_add(x, _i32(n))
        np.testing.assert_array_equal(out.astype(np.float32), n * x.astype(np.float32))


@pytest.mark.parametrize("lo,hi,step", [(0, 10, 1), (3, 17, 4), (5, 5, 1), (9, 2, 1), (-4, 3, 2)])
def test_register_bounds_dynamic_range_and_fori_loop(lo, hi, step):
    out = ranged_sum(_i32(lo), _i32(hi), step)
    ref = sum(range(lo, hi, step))
    assert out.tolist() == [[ref, ref]]


def test_dynamic_rows_with_scalar_offset():
    """The induction register as .ap(scalar_offset=i): one compile, several counts; a count
    past the end is a located out-of-bounds runtime error."""
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    ck = exp_rows.compile(x, _i32(0))
    for n in (0, 1, 5, 8):
        ref = np.zeros_like(x)
        ref[:n] = np.exp(x[:n])
        np.testing.assert_allclose(ck(x, _i32(n)), ref, rtol=1e-5)
    with pytest.raises(NKIRuntimeError, match="out-of-bounds") as info:
        ck(x, _i32(9))
    assert info.value.loc.line == _line("# exp_rows read")


@pytest.mark.parametrize("index", [0, 3, 7])
def test_scalar_offset_from_tensor(index):
    x = np.random.default_rng(4).standard_normal((8, 16)).astype(np.float32)
    ck = row_at.compile(x, _i32(0))
    np.testing.assert_array_equal(ck(x, _i32(index)), x[index:index + 1])
    assert "nisa.register_load" in ck.ir("nisa") and "nisa.register_read" in ck.ir("nisa")


def test_scalar_index_paths():
    """scalar_index: int -> constant, register -> register_read, induction value -> itself,
    (1, 1) int tensor -> register_alloc + register_load + register_read; other values error."""
    from xdsl.ir import Block
    from nki_mlir import dtypes
    from nki_mlir.dialects.common import memref
    from nki_mlir.frontend.builder import IRBuilder
    from nki_mlir.frontend.isa_control import Register, new_register, scalar_index
    from nki_mlir.frontend.source import FunctionSource
    from nki_mlir.frontend.tracer import TraceContext
    from nki_mlir.frontend.values import Tensor
    block = Block(arg_types=[memref((1, 1), dtypes.int32, "shared_hbm"),
                             memref((1, 1), dtypes.float32, "sbuf"), memref((1, 2), dtypes.int32, "sbuf")])
    b = IRBuilder(block)
    b.target = "trn2"
    cg = TraceContext(b, FunctionSource.of(test_scalar_index_paths), {}, "auto")
    ti, tf, t2 = (Tensor(a, tuple(a.type.get_shape()), dt, sp, (s, 1), 0, block, n)
                  for a, dt, sp, s, n in zip(block.args, (dtypes.int32, dtypes.float32, dtypes.int32),
                                            ("shared_hbm", "sbuf", "sbuf"), (1, 1, 2), "ifw"))
    names = lambda: [op.name for op in block.ops]  # noqa: E731
    assert scalar_index(cg, 5).owner.name == "arith.constant"
    v = scalar_index(cg, ti)
    assert names()[-3:] == ["nki.register_alloc", "nki.register_load", "nki.register_read"]
    assert str(v.type) == "index"
    r = new_register(cg)
    assert scalar_index(cg, r).owner.name == "nki.register_read"
    iv = Register(v, block, "i", readonly=True)
    assert scalar_index(cg, iv) is v
    with pytest.raises(NKITypeError, match="must have an integer dtype"):
        scalar_index(cg, tf)
    with pytest.raises(NKITypeError, match="must be a 1-element tensor"):
        scalar_index(cg, t2)
    with pytest.raises(NKITypeError, match="must be a register, a 1-element int tensor or an int"):
        scalar_index(cg, 1.5)


def test_fori_loop_int_bounds():
    x = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_allclose(fori_static_bounds(x), 5 * x, rtol=1e-6)


@pytest.mark.parametrize("start", [0, 1, 4, 9])
def test_while_loop_is_a_true_while(start):
    out = countdown(_i32(start))
    # zero iterations when init is 0 (checked before entry); the body saw 1 last otherwise
    assert out.tolist() == [[start, 1 if start else -1]]


@pytest.mark.parametrize("start", [0, 1, 6])
def test_while_on_register(start):
    x = np.random.default_rng(2).standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(while_register(_i32(start), x), start * x, rtol=1e-5)


def test_register_roundtrip():
    f = np.array([[-2.75]], np.float32)
    out_i, out_f, out_u = register_roundtrip(f, np.array([[-3]], np.int16), np.array([[200]], np.uint8))
    assert out_i.tolist() == [[7, 7, -3, 200]]
    assert out_f.tolist() == [[-2.75]]          # float32 bits kept through the register
    assert out_u.tolist() == [[255]]            # -1 wrapped to 8 bits


def test_runaway_loop_is_a_located_runtime_error(monkeypatch):
    from nki_mlir.runtime import control
    monkeypatch.setattr(control, "MAX_LOOP_ITERATIONS", 50)
    assert spin(_i32(0)).tolist() == [[0]]
    with pytest.raises(NKIRuntimeError) as info:
        spin(_i32(1))
    assert "runaway loop: more than 50 iterations" in str(info.value)
    assert info.value.loc.line == _line("    while r:\n        nisa.register_load(r, flag)") 


def test_dynamic_for_runaway_checked_at_entry(monkeypatch):
    from nki_mlir.runtime import control
    monkeypatch.setattr(control, "MAX_LOOP_ITERATIONS", 10)
    x = np.ones((1, 1), np.float32)
    repeat_add(x, _i32(10))
    with pytest.raises(NKIRuntimeError, match="runaway loop: more than 10 iterations"):
        repeat_add(x, _i32(11))


def test_ir_shapes():
    """Registers are memref<1xi32, #nisa.mem<reg>>; bounds come from nisa.register_read;
    no_reorder is a begin/end marker pair; the scheduler orders its span."""
    x = np.zeros((16, 8), np.float32)
    nisa_ir = while_register.compile(_i32(1), x).ir("nisa")
    assert "memref<1xi32, #nisa.mem<reg>>" in nisa_ir
    assert "nisa.register_read(" in nisa_ir and "scf.while" in nisa_ir
    assert nisa_ir.index("nisa.no_reorder_begin") < nisa_ir.index("nisa.no_reorder_end")
    ir = repeat_add.compile(np.zeros((1, 1), np.float32), _i32(0)).ir("nisa")
    assert "nkim.partition" not in ir.split("nisa.register_alloc")[1].split("\n")[0]


# ====================================================================== diagnostics


def _line(text: str) -> int:
    src = open(FILE).read()
    at = src.index(text)
    return src[:at].count("\n") + 1


@nki.jit
def bad_iv_arith(count):
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    for i in nl.dynamic_range(n):
        j = i + 1  # bad_iv_arith
    return count


@nki.jit
def bad_if_register(count):
    n = nisa.register_alloc()
    if n:  # bad_if_register
        pass
    return count


@nki.jit
def bad_int_register(count):
    n = nisa.register_alloc()
    k = int(n)  # bad_int_register
    return count


@nki.jit
def bad_compare_register(count):
    n = nisa.register_alloc()
    while n > 0:  # bad_compare_register
        pass
    return count


@nki.jit
def bad_tensor_after_loop(count):
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    for i in nl.dynamic_range(n):
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=0)
    nisa.dma_copy(dst=count, src=t)  # bad_tensor_after_loop
    return count


@nki.jit
def bad_register_after_loop(count):
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    for i in nl.dynamic_range(n):
        r = nisa.register_alloc(1)
    nisa.register_store(count, r)  # bad_register_after_loop
    return count


@nki.jit
def bad_write_iv(count):
    def body(i):
        nisa.register_move(i, 3)  # bad_write_iv

    nl.fori_loop(0, 4, body)
    return count


@nki.jit
def bad_loop_in_no_reorder(count):
    n = nisa.register_alloc(2)
    with nl.no_reorder():
        for i in nl.dynamic_range(n):  # bad_loop_in_no_reorder
            pass
    return count


@nki.jit
def bad_while_never_updates(count):
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    while n:  # bad_while_never_updates
        nisa.memset(dst=t, value=0)
    return count


@nki.jit
def bad_step(count):
    for i in nl.dynamic_range(0, 8, 0):  # bad_step
        pass
    return count


@nki.jit
def bad_bound(count):
    for i in nl.dynamic_range(count):  # bad_bound
        pass
    return count


@nki.jit
def bad_fori_returns(count):
    def body(i):
        return 1

    nl.fori_loop(0, 4, body)  # bad_fori_returns
    return count


@nki.jit
def bad_while_loop_returns(count):
    n = nisa.register_alloc(1)

    def body(r):
        return 0

    nl.while_loop(n, body)  # bad_while_loop_returns
    return count


@nki.jit
def bad_load_shape(count):
    n = nisa.register_alloc()
    t = nl.ndarray((1, 2), nl.int32, buffer=nl.sbuf)
    nisa.register_load(n, t)  # bad_load_shape
    return count


@nki.jit
def bad_load_dtype(count):
    n = nisa.register_alloc()
    t = nl.ndarray((1, 1), nl.bfloat16, buffer=nl.sbuf)
    nisa.register_load(n, t)  # bad_load_dtype
    return count


@nki.jit
def bad_move_value(count):
    n = nisa.register_alloc()
    nisa.register_move(n, 2 ** 40)  # bad_move_value
    return count


@nki.jit
def bad_with(count):
    with nl.static_range(1):  # bad_with
        pass
    return count


CASES = [
    (bad_iv_arith, NKITypeError, "Python arithmetic or comparison on a register is not allowed"),
    (bad_if_register, NKITypeError, "cannot be used as an if/elif condition"),
    (bad_int_register, NKITypeError, "converted with bool()/int()"),
    (bad_compare_register, NKITypeError, "Python arithmetic or comparison on a register"),
    (bad_tensor_after_loop, NKISyntaxError, "was created inside a loop body and cannot be used outside it"),
    (bad_register_after_loop, NKISyntaxError, "nisa.register_store: 'src' is register 'r', which was created inside a loop body"),
    (bad_write_iv, NKITypeError, "nisa.register_move: 'dst' is the induction register of nl.fori_loop, which is read-only"),
    (bad_loop_in_no_reorder, NKISyntaxError, "nl.dynamic_range: runtime (dynamic) loops are not allowed inside 'with nl.no_reorder():'"),
    (bad_while_never_updates, NKISyntaxError, "the body of 'while n:' never writes the register"),
    (bad_step, NKITypeError, "nl.dynamic_range: step must be a positive compile-time int, got int 0"),
    (bad_bound, NKITypeError, "nl.dynamic_range: 'stop' must be an int or a register, got a tensor"),
    (bad_fori_returns, NKITypeError, "nl.fori_loop: body_fun must return None, got int 1"),
    (bad_while_loop_returns, NKITypeError, "nl.while_loop: body_fun must return the next condition register, got int 0"),
    (bad_load_shape, NKITypeError, "nisa.register_load: 'src' must be a 1-element tensor"),
    (bad_load_dtype, NKIVerifyError, "nisa.register_load: 'src' has dtype bfloat16; registers hold int8, int16"),
    (bad_move_value, NKITypeError, "nisa.register_move: 'src'=1099511627776 does not fit in a 32-bit register"),
    (bad_with, NKIError, "does not support the context manager protocol"),
]


@pytest.mark.parametrize("kernel,cls,fragment", CASES, ids=[c[0].__name__ for c in CASES])
def test_located_diagnostic(kernel, cls, fragment):
    with pytest.raises(cls) as info:
        kernel(_i32(1))
    err = info.value
    text = str(err)
    assert fragment in text
    assert err.loc is not None and err.loc.file == FILE
    assert err.loc.line == _line(f"# {kernel.__name__}\n")
    assert "Traceback" not in text
