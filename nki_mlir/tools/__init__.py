"""Command-line tools: ``nki-opt`` (:mod:`nki_mlir.tools.nki_opt`)."""
