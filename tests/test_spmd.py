"""pmap and shard_map in one process (one device): the HLO they write, their
errors, and gradients through the collectives; the multi-process runs are in
tests/distributed."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy
from xlapy import lax
from xlapy.sharding import Mesh, P, make_mesh


def test_pmap_writes_collectives_with_explicit_groups():
    f = xlapy.pmap(lambda x: (lax.psum(x, "i"), lax.all_gather(x, "i"),
                              lax.ppermute(x, "i", [(0, 0)]), lax.axis_index("i")), "i")
    x = np.arange(3, dtype=np.float32)[None]
    text = f.lower(x).as_text()
    assert "all-reduce(" in text and "replica_groups={{0}}" in text
    assert "all-gather(" in text and "collective-permute(" in text and "replica-id()" in text
    s, g, p, i = f(x)
    np.testing.assert_array_equal(np.asarray(s), x)
    np.testing.assert_array_equal(np.asarray(g), x[:, None])
    np.testing.assert_array_equal(np.asarray(p), x)
    assert np.asarray(i).tolist() == [0]


def test_shard_map_writes_a_partitioned_module_with_channels():
    mesh = make_mesh((1,), ("x",))
    f = xlapy.shard_map(lambda a: lax.psum(a, "x"), mesh, in_specs=(P("x"),), out_specs=P("x"))
    a = np.arange(4, dtype=np.float32)
    text = f.lower(a).as_text()
    assert "channel_id=" in text and "use_global_device_ids=true" in text
    np.testing.assert_array_equal(np.asarray(f(a)), a)


def test_unbound_axis_names_raise_name_error():
    with pytest.raises(NameError, match="unbound axis name 'i'"):
        lax.psum(np.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name 'j'"):
        xlapy.pmap(lambda x: lax.psum(x, "j"), "i")(np.ones((1, 3)))


def test_pmap_wants_the_local_device_axis():
    with pytest.raises(ValueError, match="local device"):
        xlapy.pmap(lambda x: x, "i")(np.ones((4, 3)))


def test_meshes_are_checked():
    with pytest.raises(ValueError, match="needs 4 devices"):
        make_mesh((2, 2), ("a", "b"))
    with pytest.raises(ValueError, match="axis names repeat"):
        Mesh(np.array([0]).reshape(1, 1), ("a", "a"))
    assert make_mesh((1,), ("x",)).shape == {"x": 1}


def test_psum_scatter_and_all_to_all_shapes_on_one_device():
    f = xlapy.pmap(lambda x: (lax.psum_scatter(x, "i"), lax.all_to_all(x, "i", 0, 1),
                              lax.all_gather(x, "i", axis=1, tiled=True)), "i")
    x = np.arange(3, dtype=np.float32).reshape(1, 3)[None]
    s, t, g = f(x)
    assert np.asarray(s).shape == (1, 3) and np.asarray(t).shape == (1, 3, 1)
    np.testing.assert_array_equal(np.asarray(g), x)


def test_gradients_through_collectives_on_one_device():
    def loss(x):
        y = lax.all_gather(x, "i", tiled=True)
        y = lax.ppermute(y, "i", [(0, 0)])
        y = lax.psum_scatter(y * y, "i", tiled=True)
        return lax.psum(y.sum(), "i")
    x = np.linspace(-1, 1, 4).astype(np.float32)
    g = xlapy.pmap(xlapy.grad(loss), "i")(x[None])
    np.testing.assert_allclose(np.asarray(g)[0], 2 * x, rtol=1e-6)
    jvp = xlapy.pmap(lambda x: xlapy.jvp(loss, (x,), (xlapy.numpy.ones_like(x),))[1], "i")(
        x[None])
    np.testing.assert_allclose(np.asarray(jvp)[0], 2 * x.sum(), rtol=1e-6)


def test_a_non_sum_collective_is_not_differentiable():
    with pytest.raises(xlapy.CompileError, match="not linear"):
        xlapy.pmap(xlapy.grad(lambda x: lax.pmax(x, "i").sum()), "i")(np.ones((1, 3), np.float32))
