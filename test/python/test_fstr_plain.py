"""The tracer's f-strings (:func:`nki_mlir.frontend.symbolic_str.nki_fstr`, what every
f-string of a kernel becomes) give Python's text when no field is a symbolic program id:
conversions ``!r !s !a``, format specs, nested specs and literal pieces."""
import pytest

from nki_mlir.frontend.loop_rewrite import traced_function


class Shown:
    def __repr__(self):
        return "Shown<é>"

    def __format__(self, spec):
        return f"fmt[{spec}]"


def sample(x, width, name, obj):
    return [f"{x}", f"x={x:>{width}.2f}|", f"{name!r}-{name!s}-{name!a}", f"{obj}{obj!r:>12}",
            f"{{literal}} {x:{'+' if x > 0 else ''}}", f"{width:#06x}{'':>2}end", f"{obj:abc}"]


@pytest.mark.parametrize("x,width,name", [(1.5, 8, "é"), (-2.25, 3, "n"), (0.0, 0, "")])
def test_fstrings_rewritten_for_the_tracer_give_pythons_text(x, width, name):
    traced = traced_function(sample)
    assert traced is not sample and "__nki_fstr__" in traced.__code__.co_freevars
    assert traced(x, width, name, Shown()) == sample(x, width, name, Shown())
