"""lit configuration of nki-mlir's FileCheck tests (toolchain.md sections 2 and 4).

Run from the source tree with ``lit -v test/lit`` (the venv's ``bin`` first on PATH),
or through CMake: ``cmake --build build --target check-nki-mlir`` loads this file from
the generated ``lit.site.cfg.py``, which sets ``python_executable``, ``nki_src_root``
and ``nki_obj_root`` (``Output/`` then goes to the build tree).

Substitutions: ``%nki-opt`` (our driver run by the configured Python), ``%python``,
``%nki-mlir`` (compile a kernel .py file and print its IR), ``%mlir-opt`` (an upstream
mlir-opt compatible binary, when one is on PATH; tests that use it say
``REQUIRES: upstream-mlir``).
"""
import os
import shutil
import sys

import lit.formats

config.name = "nki_mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
src_root = getattr(config, "nki_src_root",
                   os.path.dirname(os.path.dirname(config.test_source_root)))
if hasattr(config, "nki_obj_root"):
    config.test_exec_root = os.path.join(config.nki_obj_root, "test", "lit")
python = getattr(config, "python_executable", sys.executable)

config.environment["PYTHONPATH"] = src_root + os.pathsep + os.environ.get("PYTHONPATH", "")
config.environment["PATH"] = os.path.dirname(python) + os.pathsep + os.environ["PATH"]
config.environment["NKI_MLIR_VERIFY_EACH_PASS"] = "1"  # the module verifier after every pass
config.substitutions.append(("%nki-opt", f'"{python}" -m nki_mlir.tools.nki_opt'))
config.substitutions.append(("%python", f'"{python}"'))
config.substitutions.append(("%nki-mlir", f'"{python}" -m nki_mlir.tools.cli'))

# Optional upstream MLIR (e.g. `pip install iree-base-compiler==3.13.0` gives iree-opt).
for tool in ("mlir-opt", "iree-opt", "torch-mlir-opt"):
    path = shutil.which(tool, path=config.environment["PATH"])
    if path:
        config.available_features.add("upstream-mlir")
        config.substitutions.append(("%mlir-opt", f'"{path}"'))
        break

# A per-test timeout where lit supports one (it needs psutil).
import lit.util  # noqa: E402

supported, _why = lit.util.killProcessAndChildrenIsSupported()
if supported:
    lit_config.maxIndividualTestTime = 60
