"""A context made in a fresh process knows the ops of every instruction definition, even when
nothing imported ``nki_mlir.instructions`` first (``nki_mlir.dialect_extensions``)."""
import subprocess
import sys

_TEXT = """
func.func @k(%a: memref<128x4xf32, #nisa.mem<sbuf>>, %b: memref<128x4xf32, #nisa.mem<sbuf>>) {
  %c = arith.constant 2.0 : f32
  nisa.tensor_scalar_arith(dst=memref<128x4xf32, #nisa.mem<sbuf>> %b, src=memref<128x4xf32, #nisa.mem<sbuf>> %a, operand0=f32 %c, op0=multiply) engine=vector
  func.return
}
"""


def test_fresh_context_parses_an_instruction_definitions_op():
    code = ("import sys\n"
            "from xdsl.parser import Parser\n"
            "from nki_mlir.dialects import make_context\n"
            "assert 'nki_mlir.instructions' not in sys.modules\n"
            f"m = Parser(make_context(), {_TEXT!r}).parse_module()\n"
            "print(sorted({o.name for o in m.walk()}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "nisa.tensor_scalar_arith" in out.stdout


def test_loaders_run_once():
    from nki_mlir import dialect_extensions

    calls = []
    dialect_extensions.add(lambda: calls.append(1))
    dialect_extensions.load_all()
    dialect_extensions.load_all()
    assert calls == [1]
