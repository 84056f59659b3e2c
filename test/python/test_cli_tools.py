"""The nki-mlir command line: EXAMPLE_ARGS for compile/run, full --help texts, a closed
pipe ends quietly, documented exit codes."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
CLI = [sys.executable, "-c", "import sys; from nki_mlir.tools.cli import main; sys.exit(main())"]


def _file(tmp_path):
    import script_kernel
    return script_kernel.copy_to(tmp_path)


def test_run_takes_example_args(tmp_path):
    from nki_mlir.tools.cli import main
    path = _file(tmp_path)
    assert main(["run", f"{path}::twice"]) == 0


def test_help_texts_are_whole(capsys):
    from nki_mlir.tools.cli import main
    import pytest
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "EXAMPLE_ARGS" in out and "Exit status" in out


def test_closed_pipe_is_quiet(tmp_path):
    path = _file(tmp_path)
    p = subprocess.Popen(CLI + ["compile", f"{path}::twice", "--arg", "128x64xf32"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    p.stdout.close()            # the reader is gone before the output comes, as with `| head -0`
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_exit_status_of_a_kernel_error(tmp_path):
    from nki_mlir.tools.cli import main
    path = _file(tmp_path)
    assert main(["run", f"{path}::twice", "--arg", "256x64xf32"]) == 1   # 256 partitions
