"""`xlapy.lax`: primitives that map one to one onto HLO, as in jax.lax.

Each works eagerly on concrete arrays (evaluated at once with XLA's
semantics) and under `xlapy.jit` (emitting one HLO instruction, or a
`while`/`conditional` with traced bodies for control flow).
"""

from xlapy.lax.contraction import *  # noqa: F403
from xlapy.lax.control_flow import *  # noqa: F403
from xlapy.lax.elementwise import *  # noqa: F403
from xlapy.lax.gather_scatter import *  # noqa: F403
from xlapy.lax.indexing import *  # noqa: F403
from xlapy.lax.parallel import *  # noqa: F403
from xlapy.lax.reductions import *  # noqa: F403
from xlapy.lax.reshaping import *  # noqa: F403
from xlapy.lax.rng import *  # noqa: F403
from xlapy.lax.sorting import *  # noqa: F403
from xlapy.lax.windows import *  # noqa: F403
