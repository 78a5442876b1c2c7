"""xlapy.numpy: _manipulation (being written)."""

__all__: list[str] = []
