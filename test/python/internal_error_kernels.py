"""Beta 1 kernels for test_internal_errors.py: allocation functions that fail in the user's
code and in nki-mlir's.  Written for nki-mlir's tests."""
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.compiler as ncc  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


def place_by_program_id(idx, pdim_size, fdim_size):
    """An ncc.sbuf.alloc function calling an NKI API (nl.program_id)."""
    return (0, 1024 * nl.program_id(0))


def place_divides_by_zero(idx, pdim_size, fdim_size):
    """An ncc.sbuf.alloc function with a bug of its own."""
    return (0, fdim_size // (pdim_size - pdim_size))


@nki.jit
def alloc_calls_api(a):
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.alloc(place_by_program_id))  # API
    return a


@nki.jit
def alloc_raises(a):
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.alloc(place_divides_by_zero))  # RAISES
    return a
