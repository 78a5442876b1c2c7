"""xlapy.numpy: _creation (being written)."""

__all__: list[str] = []
