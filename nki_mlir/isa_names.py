"""The names of the ``nki.isa`` instructions (shared by the Beta 2 ``nisa`` module, the Beta 1
one and the frontend, without import cycles).

The list below holds the instructions written family by family; an instruction defined in
``nki_mlir/instructions`` adds its name when it registers (:func:`define`).
"""

INSTRUCTIONS = [
    # queries
    "get_nc_version", "get_nc_sub_version",
]


def define(name: str) -> None:
    """Add the instruction ``name`` (from its definition).

    Raises:
        ValueError: an internal error: the name is listed already.
    """
    if name in INSTRUCTIONS:
        raise ValueError(f"internal error: nki.isa.{name} is defined twice")
    INSTRUCTIONS.append(name)
