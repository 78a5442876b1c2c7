"""xlapy.numpy: _reductions (being written)."""

__all__: list[str] = []
