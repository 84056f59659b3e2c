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
        assert nki_b1 is nki_mlir and nl_b1 is nki_mlir.language and nisa_b1 is nki_mlir.isa
    finally:
        nki_mlir.compat.uninstall()
    assert "neuronxcc" not in sys.modules and "neuronxcc.nki" not in sys.modules
