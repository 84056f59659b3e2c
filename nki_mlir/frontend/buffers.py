"""The buffer tokens of ``nki.language``: ``nl.sbuf``, ``nl.psum``, ``nl.hbm`` (=
``nl.private_hbm``) and ``nl.shared_hbm`` (NKI ``nki.language`` memory hierarchy pages).
Defined here, below the public API, for the frontend (``buffer=`` arguments, ``t.buffer``);
:mod:`nki_mlir.language` exports them."""
from __future__ import annotations


class MemoryRegion:
    """A buffer token (``nl.sbuf``, ``nl.psum``, ``nl.hbm``, ``nl.shared_hbm``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"nl.{self.name}"

    def __reduce__(self):
        return (buffer_by_name, (self.name,))


sbuf = MemoryRegion("sbuf")
psum = MemoryRegion("psum")
hbm = MemoryRegion("hbm")
private_hbm = hbm  # nl.hbm is an alias of nl.private_hbm
shared_hbm = MemoryRegion("shared_hbm")


def buffer_by_name(name: str) -> MemoryRegion:
    """The token of buffer ``name`` (``"sbuf"``, ``"psum"``, ``"hbm"``, ``"private_hbm"``,
    ``"shared_hbm"``); KeyError for another name."""
    return {"sbuf": sbuf, "psum": psum, "hbm": hbm, "private_hbm": hbm, "shared_hbm": shared_hbm}[name]
