"""How a layer below `xlapy.jit` compiles a function it runs eagerly (a sampler
called every step, `xlapy.random._eager`): `xlapy.jit` registers itself here
when imported, since the layers forbid importing it from below."""

from __future__ import annotations

JIT = None
"""`JIT(fn, static_argnums)`: `fn` compiled once per signature (a JitFunction:
`signature_key` tells calls apart as its cache does), its recompiles never
warned (they are the library's, not the user's); None until xlapy.jit is
imported, and then callers run `fn` as it is."""
