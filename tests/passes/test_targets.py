"""The pipeline's promises on the seeds' examples, measured on what jit compiles:
`sum(x + y*z)` is one fusion with no temporary larger than a scalar, and a row
softmax is at most two fusions whose temporaries are at most one row-sized
vector per reduction."""

import numpy as np

import xlapy
import xlapy.numpy as xnp
from xlapy.hlo.opcode import Opcode

X = np.ones((64, 256), np.float32)


def fusions(compiled):
    entry = compiled.executable.module.entry_computation
    return [i for i in entry.instructions if i.opcode is Opcode.FUSION], entry


def test_sum_of_x_plus_y_times_z_is_one_fusion_and_no_temporaries():
    compiled = xlapy.jit(lambda x, y, z: xnp.sum(x + y * z)).lower(X, X, X).compile()
    kernels, entry = fusions(compiled)
    assert len(kernels) == 1
    assert [i.opcode for i in entry.instructions if i.opcode is not Opcode.PARAMETER] == \
        [Opcode.FUSION]
    assert compiled.memory_analysis().temp_size_in_bytes <= 4
    out = compiled(X, X * 2, X * 3)
    assert float(np.asarray(out)) == 7.0 * X.size


def test_row_softmax_is_at_most_two_fusions_and_row_sized_temporaries():
    def softmax(x):
        e = xnp.exp(x - xnp.max(x, axis=-1, keepdims=True))
        return e / xnp.sum(e, axis=-1, keepdims=True)

    compiled = xlapy.jit(softmax).lower(X).compile()
    kernels, entry = fusions(compiled)
    assert 1 <= len(kernels) <= 2
    rows = X.shape[0]
    assert compiled.memory_analysis().temp_size_in_bytes <= 2 * rows * 4
    reference = np.exp(X - X.max(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(compiled(X)), reference / reference.sum(-1, keepdims=True),
                               rtol=1e-6)


def test_cost_analysis_counts_flops_and_bytes():
    compiled = xlapy.jit(lambda a, b: a @ b).lower(X, X.T.copy()).compile()
    cost = compiled.cost_analysis()
    assert cost["flops"] == 2 * 64 * 256 * 64
    assert cost["bytes accessed"] == (2 * X.nbytes) + 64 * 64 * 4
