"""``nki_mlir.framework_ops``: kernels as framework ops (:mod:`nki_mlir.driver.framework_ops`):
:func:`torch_custom_op` registers a kernel as a ``torch.library`` custom op; :func:`jax_call`
runs one inside ``jax.jit``."""
from .driver.framework_ops import has_jax_tracer, jax_call, torch_custom_op  # noqa: F401

__all__ = ["torch_custom_op", "jax_call", "has_jax_tracer"]
