"""xlapy.numpy: _sorting (being written)."""

__all__: list[str] = []
