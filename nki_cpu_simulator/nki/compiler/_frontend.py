"""Canonical module behind ``nki_cpu_simulator.nki.compiler.frontend`` (one copy under every alias)."""
from nki_cpu_simulator.nki.compiler._standins import NKIFrontend, ParserFrontend

__all__ = ["NKIFrontend", "ParserFrontend"]
