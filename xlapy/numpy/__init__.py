"""`xlapy.numpy` (import as `xnp`): NumPy's API on xlapy arrays, as jax.numpy.

Every function runs eagerly on concrete arrays and traces under `xlapy.jit`,
with JAX's type promotion (weak Python scalars keep an array's dtype).
"""

import sys
from types import FunctionType

from xlapy.core.array import install_methods
from xlapy.core.lazy_replay import replay_in, replayed
from xlapy.numpy import _indexing as _indexing_module
from xlapy.numpy import linalg  # noqa: F401
from xlapy.numpy._creation import *  # noqa: F403
from xlapy.numpy._index_routines import *  # noqa: F403
from xlapy.numpy._indexing import *  # noqa: F403
from xlapy.numpy._indexing import not_replayed as _getitem_not_replayed
from xlapy.numpy._linalg_ops import *  # noqa: F403
from xlapy.numpy._manipulation import *  # noqa: F403
from xlapy.numpy._math import *  # noqa: F403
from xlapy.numpy._reductions import *  # noqa: F403
from xlapy.numpy._sorting import *  # noqa: F403

_REPLAYED = {f"xlapy.numpy.{m}" for m in ("_arithmetic", "_ufuncs", "_math", "_manipulation",
                                          "_shapes", "_reductions", "_nan_reductions",
                                          "_linalg_ops", "_cumulative", "_einsum",
                                          "_indexing")}

# Lazy mode learns what each call of these records and replays it (the rest can
# depend on data or return shapes and dtypes, and are left as they are).
# Of these, a Python scalar beside a floating array is an operand (a learning
# rate that changes every step is not a new signature); power's int exponent
# multiplies, so only its float one is.
_SCALAR_OPERANDS = {**dict.fromkeys(("add", "subtract", "multiply", "true_divide", "divide",
                                     "maximum", "minimum"), (float, int)),
                    "power": (float,)}
# Indexing a concrete array, or by a Python int, is not replayed (`not_replayed`).
_UNLESS = {"getitem": _getitem_not_replayed}
for _name, _value in list(vars().items()):
    if isinstance(_value, FunctionType) and _value.__module__ in _REPLAYED:
        vars()[_name] = replayed(_value, _SCALAR_OPERANDS.get(_name, ()), _UNLESS.get(_name),
                                 __name__)

# Of the creation functions, those of a shape and dtype alone (a step's
# `h = xnp.zeros((8, 32))`: ~30 µs a call recorded as it is), ranges and
# matrices (`xnp.eye(16)`: ~90 µs) (`array` and `asarray` hand back data);
# sorting, quantiles, take and put, and linalg, of static shapes (those whose
# result's shape depends on the data, unique or nonzero, are left as they are).
replay_in(vars(), ("full", "zeros", "ones", "empty", "full_like", "zeros_like", "ones_like",
                   "empty_like", "arange", "linspace", "logspace", "geomspace", "tri", "eye",
                   "identity", "tril", "triu", "diag", "diagflat", "meshgrid", "indices",
                   "sort", "argsort", "partition", "argpartition", "lexsort", "searchsorted",
                   "digitize", "isin", "select", "median", "quantile", "percentile",
                   "nanmedian", "nanquantile", "nanpercentile", "take", "take_along_axis",
                   "put", "put_along_axis", "ravel_multi_index", "unravel_index"), __name__)
replay_in(vars(linalg), ("norm", "vector_norm", "matrix_norm", "matrix_transpose", "solve",
                         "inv", "det", "slogdet", "trace", "diagonal", "cross", "multi_dot",
                         "cholesky", "qr", "eigh", "eigvalsh", "svdvals", "solve_triangular",
                         "triangular_solve", "lu_factor", "matrix_power"), linalg.__name__)

_replayed_getitem = vars()["getitem"]   # (replayed by the loop above)
_lazy_index = _indexing_module.lazy_index


def getitem(x, index):
    """`x[index]` (see `_indexing.getitem`); in lazy mode, the int indices of a
    lazy array (pending, or computed by a cluster: a step's parameters) are
    operands (`_indexing.lazy_index`), so the call is replayed (iterating over
    one too: `key, sub = random.split(key)`)."""
    return _replayed_getitem(x, _lazy_index(x, index))


getitem.__wrapped_for_lazy__ = _replayed_getitem.__wrapped_for_lazy__

# `x.at[index].set(values)` and the like (`_indexing._update` calls it).
_index_update = replayed(_indexing_module.index_update, (), _indexing_module.holds_int)

install_methods(sys.modules[__name__])

del sys, install_methods, replayed, replay_in, FunctionType, _REPLAYED, _SCALAR_OPERANDS, _UNLESS
del _getitem_not_replayed, _indexing_module, _name, _value
