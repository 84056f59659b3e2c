"""``nki.typing`` (``nt``): kernel argument annotations (``nt.tensor[128, 512]``).

Annotations are accepted and ignored by the Beta 2 frontend (shape checking of
annotations, ``err_annotation_shape_mismatch``, comes with the Beta 1 front).
"""
from __future__ import annotations


class _TensorAnnotation:
    def __init__(self, name: str, shape=None, dtype=None):
        self.name, self.shape, self.dtype = name, shape, dtype

    def __getitem__(self, key):
        return _TensorAnnotation(self.name, key if isinstance(key, tuple) else (key,))

    def __repr__(self) -> str:
        return f"nt.{self.name}" + ("" if self.shape is None else str(list(self.shape)))


tensor = _TensorAnnotation("tensor")
mutable_tensor = _TensorAnnotation("mutable_tensor")
scalar = _TensorAnnotation("scalar")
