"""`xlapy.nn`: neural-network functions with jax.nn's names, formulas and
dtypes: activations, softmax and its log, logsumexp, standardize, one_hot.

Everything is composed from `xlapy.numpy` and `xlapy.lax`, so it runs
eagerly and under `xlapy.jit` alike.
"""

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
