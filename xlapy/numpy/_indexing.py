"""xlapy.numpy: _indexing (being written)."""

__all__: list[str] = []
