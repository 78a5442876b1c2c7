"""xlapy.numpy: _linalg_ops (being written)."""

__all__: list[str] = []
