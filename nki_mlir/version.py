"""The nki-mlir version: the one place it is written (``pyproject.toml`` reads it from here;
cache keys and artifact manifests record it)."""
__version__ = "0.1.0"
