"""xlapy.lax: reductions primitives (being written)."""

__all__: list[str] = []
