"""`xlapy.lax`: primitives that map one to one onto HLO, as in jax.lax.

Each works eagerly on concrete arrays (evaluated at once with XLA's
semantics) and under `xlapy.jit` (emitting one HLO instruction, or a
`while`/`conditional` with traced bodies for control flow). In lazy mode
each call is learned once per signature and replayed (`lazy_replay`):
recorded as it is, inside an eager step, a primitive cost 5-25 µs a call of
checks and shape inference; replayed, ~1.5. (xlapy's own modules call the
functions unwrapped, from `xlapy.lax.primitives`.)
"""

from xlapy.core.lazy_replay import replay_in as _replay_in
from xlapy.lax.primitives import *  # noqa: F403
from xlapy.lax.primitives import REPLAYABLE as _REPLAYABLE

_replay_in(globals(), sorted(_REPLAYABLE), __name__)
del _replay_in, _REPLAYABLE
