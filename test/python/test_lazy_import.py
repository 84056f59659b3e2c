"""``import nki_mlir`` loads neither xDSL nor the frontend (issue 20: a cache hit needs
neither; the import costs a few tens of ms beyond NumPy, measured in bench/toolchain.py)."""
import subprocess
import sys


def _modules_after(stmt: str) -> set[str]:
    code = f"import sys; {stmt}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return set(out.stdout.split())


def test_import_loads_no_xdsl_and_no_frontend():
    mods = _modules_after("import nki_mlir")
    assert "nki_mlir" in mods
    assert not {m for m in mods if m == "xdsl" or m.startswith("xdsl.")}
    assert not {m for m in mods if m.startswith("nki_mlir.frontend")}

