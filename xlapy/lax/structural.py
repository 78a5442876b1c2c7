"""xlapy.lax: structural primitives (being written)."""

__all__: list[str] = []
