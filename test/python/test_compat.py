"""nki_mlir.compat: unmodified `import nki` kernel files import and run."""
import os
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HERE = os.path.dirname(os.path.abspath(__file__))


def test_unmodified_kernel_file_runs_after_install(tmp_path):
    runner = (
        "import runpy, nki_mlir\n"
        "nki_mlir.compat.install()\n"
        f"runpy.run_path({os.path.join(HERE, 'compat_kernels', 'unmodified_beta2.py')!r}, run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), "NKI_MLIR_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "relu_scale ok 3.0" in proc.stdout


def test_install_maps_the_nki_module_names():
    import nki_mlir
    nki_mlir.compat.install()
    try:
        import nki
        import nki.isa
        import nki.language
        import nki.typing
        assert nki is nki_mlir and nki.language is nki_mlir.language and nki.isa is nki_mlir.isa
        assert nki.typing is nki_mlir.typing and nki.language.float32 == np.float32
    finally:
        nki_mlir.compat.uninstall()
    assert "nki" not in sys.modules


def test_python_m_compat_runs_a_script_unmodified(tmp_path):
    script = os.path.join(HERE, "compat_kernels", "unmodified_beta2.py")
    proc = subprocess.run([sys.executable, "-m", "nki_mlir.compat", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
                               "NKI_MLIR_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "relu_scale ok 3.0" in proc.stdout


def test_beta1_module_names_resolve():
    import nki_mlir
    nki_mlir.compat.install()
    try:
        import neuronxcc.nki as nki_b1
        import neuronxcc.nki.isa as nisa_b1
        import neuronxcc.nki.language as nl_b1
        import neuronxcc.nki.compiler as ncc
        import neuronxcc.nki.typing as nt
        assert nki_b1 is nki_mlir.beta1 and nl_b1 is nki_mlir.beta1.language
        assert nisa_b1 is nki_mlir.beta1.isa and ncc is nki_mlir.beta1.compiler
        assert nt is nki_mlir.typing and nki_b1.jit is nki_mlir.jit
        assert nl_b1.float32 == np.float32 and nl_b1.static_cast.name == "nl.static_cast"
    finally:
        nki_mlir.compat.uninstall()
    assert "neuronxcc" not in sys.modules and "neuronxcc.nki" not in sys.modules


def _compat(tmp_path, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "nki_mlir.compat", *args], capture_output=True,
                          text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
                               "NKI_MLIR_CACHE_DIR": str(tmp_path / "cache")})


def test_beta1_script_runs_unmodified(tmp_path):
    """A Beta 1 script (neuronxcc imports, nl.arange / nl.mgrid indexing, tile operators,
    nt annotations, ncc.sbuf.mod_alloc, nl.loop_reduce, nki.simulate_kernel) with a
    __main__ block that checks its results against NumPy."""
    script = os.path.join(HERE, "compat_kernels", "beta1_script.py")
    proc = _compat(tmp_path, script, "--rows", "384")
    assert proc.returncode == 0, proc.stderr
    assert "exp_add_kernel ok (384, 512)" in proc.stdout
    assert "column_sum_kernel ok" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_beta1_script_runs_from_its_own_directory(tmp_path):
    proc = _compat(tmp_path, "beta1_script.py", cwd=os.path.join(HERE, "compat_kernels"))
    assert proc.returncode == 0, proc.stderr
    assert "exp_add_kernel ok (256, 512)" in proc.stdout


def test_compat_without_a_script_prints_usage(tmp_path):
    proc = _compat(tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "usage: python -m nki_mlir.compat script.py [args...]" in proc.stderr
    assert "Traceback" not in proc.stderr
    helped = _compat(tmp_path, "--help")
    assert helped.returncode == 0 and "usage:" in helped.stdout


def test_compat_with_a_missing_script(tmp_path):
    missing = str(tmp_path / "no_such_script.py")
    proc = _compat(tmp_path, missing)
    assert proc.returncode == 2
    assert f"can't open file '{missing}': no such file" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_compat_script_with_a_kernel_error(tmp_path):
    script = os.path.join(HERE, "compat_kernels", "beta1_bad_script.py")
    proc = _compat(tmp_path, script)
    assert proc.returncode == 1
    assert "before the kernel" in proc.stdout and "not reached" not in proc.stdout
    line = [i for i, l in enumerate(open(script).read().splitlines(), 1) if "nl.store(in_tensor" in l][0]
    assert f"{script}:{line}:5: invalid kernel: cannot update immutable parameter 'in_tensor'" in proc.stderr
    assert "[err_cannot_update_immutable_parameter]" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_compat_passes_the_script_exit_status(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys\nimport neuronxcc.nki as nki\nprint(sys.argv[1:])\nsys.exit(3)\n")
    proc = _compat(tmp_path, str(script), "x", "--y")
    assert proc.returncode == 3 and "['x', '--y']" in proc.stdout
