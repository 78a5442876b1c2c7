"""`xlapy.lax`: primitives that map one to one onto HLO, as in jax.lax.

Each works eagerly on concrete arrays (evaluated at once with XLA's
semantics) and under `xlapy.jit` (emitting one HLO instruction, or a
`while`/`conditional` with traced bodies for control flow).
"""

from xlapy.lax.control_flow import *  # noqa: F403
from xlapy.lax.elementwise import *  # noqa: F403
from xlapy.lax.reductions import *  # noqa: F403
from xlapy.lax.structural import *  # noqa: F403
