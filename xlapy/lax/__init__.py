"""`xlapy.lax`: primitives that map one to one onto HLO, as in jax.lax.

Each works eagerly on concrete arrays (evaluated at once with XLA's
semantics) and under `xlapy.jit` (emitting one HLO instruction, or a
`while`/`conditional` with traced bodies for control flow). In lazy mode
each call is learned once per signature and replayed (`lazy_replay`):
recorded as it is, inside an eager step, a primitive cost 5-25 µs a call of
checks and shape inference; replayed, ~1.5. (xlapy's own modules call the
functions unwrapped, from `xlapy.lax.primitives`.)
"""

from types import FunctionType as _FunctionType

from xlapy.core.lazy_replay import replayed as _replayed
from xlapy.lax.primitives import *  # noqa: F403
from xlapy.lax.primitives import REPLAYABLE as _REPLAYABLE

for _name in _REPLAYABLE:
    if isinstance(globals().get(_name), _FunctionType):
        globals()[_name] = _replayed(globals()[_name], home=__name__)
del _name, _FunctionType, _replayed, _REPLAYABLE
