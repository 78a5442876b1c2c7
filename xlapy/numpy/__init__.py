"""`xlapy.numpy` (import as `xnp`): NumPy's API on xlapy arrays, as jax.numpy.

Every function runs eagerly on concrete arrays and traces under `xlapy.jit`,
with JAX's type promotion (weak Python scalars keep an array's dtype).
"""

import sys

from xlapy.core.array import install_methods
from xlapy.numpy import linalg  # noqa: F401
from xlapy.numpy._creation import *  # noqa: F403
from xlapy.numpy._index_routines import *  # noqa: F403
from xlapy.numpy._indexing import *  # noqa: F403
from xlapy.numpy._linalg_ops import *  # noqa: F403
from xlapy.numpy._manipulation import *  # noqa: F403
from xlapy.numpy._math import *  # noqa: F403
from xlapy.numpy._reductions import *  # noqa: F403
from xlapy.numpy._sorting import *  # noqa: F403

install_methods(sys.modules[__name__])

del sys, install_methods
