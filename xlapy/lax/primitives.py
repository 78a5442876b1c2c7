"""The lax functions as they are, for xlapy's own modules.

`xlapy.lax` hands users these functions wrapped for lazy mode's replay
(`lazy_replay.replayed`); `xlapy.numpy`, `nn`, `random` and autodiff build
on them through this module instead, so the operations they run eagerly or
trace do not pass through a wrapper per primitive (their own calls are the
ones lazy mode learns and replays).
"""

from xlapy.lax import (
    contraction,
    control_flow,
    elementwise,
    gather_scatter,
    indexing,
    parallel,
    reductions,
    reshaping,
    rng,
)
from xlapy.lax.contraction import *  # noqa: F403
from xlapy.lax.control_flow import *  # noqa: F403
from xlapy.lax.elementwise import *  # noqa: F403
from xlapy.lax.gather_scatter import *  # noqa: F403
from xlapy.lax.indexing import *  # noqa: F403
from xlapy.lax.parallel import *  # noqa: F403
from xlapy.lax.reductions import *  # noqa: F403
from xlapy.lax.reshaping import *  # noqa: F403
from xlapy.lax.rng import *  # noqa: F403

REPLAYABLE = frozenset(name for module in (contraction, elementwise, gather_scatter, indexing,
                                           reductions, reshaping)
                       for name in module.__all__)
"""The functions lazy mode replays: every one that records an array operation
(control flow takes functions and collectives need their axes: they run as
they are; `reductions` lists the windows and sorting functions too)."""

__all__ = [name for module in (contraction, control_flow, elementwise, gather_scatter, indexing,
                               parallel, reductions, reshaping, rng) for name in module.__all__]
