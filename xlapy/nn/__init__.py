"""`xlapy.nn`: neural-network functions with jax.nn's names, formulas and
dtypes: activations, softmax and its log, logsumexp, standardize, one_hot.

Everything is composed from `xlapy.numpy` and `xlapy.lax`, so it runs
eagerly and under `xlapy.jit` alike. In lazy mode each function is learned
once per signature and replayed as one recorded node (`lazy_replay`): inside
an eager training step `softmax` cost ~20 µs a call and `gelu` ~35 (its
promotion, shape checks and several recorded operations, every call).
"""

from xlapy.core.lazy_replay import replay_in as _replay_in
from xlapy.nn._activations import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log_sigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softplus,
    squareplus,
    swish,
)
from xlapy.nn._normalization import log_softmax, logsumexp, one_hot, softmax, standardize

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "mish", "one_hot",
    "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus",
    "squareplus", "standardize", "swish",
]

_replay_in(globals(), __all__, __name__)   # (swish, silu's alias, stays silu)
del _replay_in
