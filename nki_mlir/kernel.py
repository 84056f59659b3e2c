"""``nki_mlir.kernel``: the ``@nki.jit`` kernel objects at their first import path (they live
in :mod:`nki_mlir.driver.jit`; ``simulate_kernel`` in :mod:`nki_mlir.driver.entry`)."""
from .diagnostics import caller_loc  # noqa: F401
from .driver.entry import simulate_kernel  # noqa: F401
from .driver.jit import MODES, Kernel, LaunchedKernel, _launch_error, jit, simulate  # noqa: F401

__all__ = ["Kernel", "LaunchedKernel", "jit", "simulate", "simulate_kernel"]
