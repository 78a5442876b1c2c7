"""xlapy.numpy: _math (being written)."""

__all__: list[str] = []
