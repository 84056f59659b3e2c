"""Bounds on compile-time Python that would run away: the kernel's ``**`` and ``<<``.

A kernel's Python runs at compile time, so ``x ** 10**30`` would hang the compiler inside one
C-level integer operation that no timer can interrupt.  The tracer rewrites the kernel's
``a ** b`` / ``a << b`` (and ``**=`` / ``<<=``) into these calls, which compute the same value
but first refuse an integer result of more than ``MAX_BITS`` bits with a located error.
Floats, NumPy values and proxies (tiles, loop indices) are passed through unchanged.
"""
from __future__ import annotations

import operator
from typing import Any

from ..errors import NKIError
from .frames import user_loc

#: the largest compile-time integer result of ``**`` / ``<<``, in bits (about 300,000 digits)
MAX_BITS = 1 << 20


def _too_big(what: str, bits: int) -> NKIError:
    return NKIError(f"compile-time {what} would be an integer of about {bits:,} bits "
                    f"(the limit is {MAX_BITS:,} bits): the kernel's Python runs at compile time, "
                    f"and this would not finish", user_loc(), category="compile-time evaluation error")


def nki_pow(a: Any, b: Any) -> Any:
    """``a ** b``, refusing an integer result over ``MAX_BITS`` bits."""
    if type(a) is int and type(b) is int and b > 0 and abs(a) > 1:
        bits = (abs(a).bit_length() - 1) * b
        if bits > MAX_BITS:
            raise _too_big(f"{a} ** {b}", bits)
    return operator.pow(a, b)


def nki_lshift(a: Any, b: Any) -> Any:
    """``a << b``, refusing an integer result over ``MAX_BITS`` bits."""
    if type(a) is int and type(b) is int and a != 0 and b > MAX_BITS:
        raise _too_big(f"{a} << {b}", b)
    return operator.lshift(a, b)
