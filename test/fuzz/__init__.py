"""Seeded fuzzers of nki-mlir: AST-mutated kernels through the frontend and the interpreter
(:mod:`.frontend`), mutated ``.mlir`` files and pass pipelines through ``nki-opt``
(:mod:`.opt`).  Every case must end in success or a located user error; an internal error,
an unlocated error or a hang is a finding.  ``bench/fuzz.py`` runs them long; the pytest
smoke run is ``test/python/test_fuzz_smoke.py``."""
