"""Lazy mode (auto-clustering): eager operations recorded and run as compiled
clusters. Values equal eager's; every materialisation point cuts a cluster with
its reason; a repeated step compiles once; grad, random keys and jit compose;
a long loop keeps its pending graph and memory bounded. (The whole
xlapy.numpy suite also runs in lazy mode: test_numpy_suite_in_lazy_mode.)"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy.core import lazy, lazy_cluster
from xlapy.core.lazy import LazyArray
from xlapy.flags import flags_set


def _stats():
    return lazy.Stats(**vars(lazy.STATS))


def _x(seed=0, shape=(4, 5)):
    return xnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _chain(x):
    y = xnp.exp(x) * 2.0 - 1.0
    return xnp.tanh(y).sum(axis=1) + xnp.max(y)


def test_recorded_values_equal_eager():
    x = _x()
    eager = np.asarray(_chain(x))
    with xlapy.jit_scope():
        got = _chain(x)
        assert type(got) is LazyArray and got.shape == (4,) and got.dtype == np.float32
        assert got._value is None   # nothing ran yet
        np.testing.assert_allclose(np.asarray(got), eager, rtol=1e-6)


def _breaks_since(clusters: int) -> list[str]:
    count = lazy.STATS.clusters - clusters
    return lazy.breaks()[-count:] if count else []


@pytest.mark.parametrize("read", [
    ("np.asarray", lambda v: np.asarray(v)),
    ("item()", lambda v: v.sum().item()),
    ("float()", lambda v: float(v.sum())),
    ("int()", lambda v: int(v.sum())),
    ("bool()", lambda v: bool(v.sum() > 0)),
    ("repr", lambda v: repr(v)),
    ("print", lambda v: str(v)),
    ("__dlpack__", lambda v: np.from_dlpack(v)),
    ("block_until_ready", lambda v: xlapy.block_until_ready(v)),
])
def test_every_materialisation_point_cuts_a_cluster(read):
    name, fn = read
    before = lazy.STATS.clusters   # (the list of breaks keeps only the last 1000)
    with xlapy.jit_scope():
        value = _chain(_x(1))
        fn(value)
        assert value._value is not None
    reasons = _breaks_since(before)
    assert reasons and reasons[0].startswith(name) and "test_lazy.py" in reasons[0], reasons


def test_values_leaving_a_jit_scope_are_computed():
    with xlapy.jit_scope():
        kept = _chain(_x(2))
    assert kept._value is not None and "end of a jit_scope" in lazy.breaks()[-1]


def test_a_growing_pending_graph_is_run_at_the_limit():
    x = _x(3)
    with flags_set("--xlapy_lazy_max_pending=8"), xlapy.jit_scope():
        for _ in range(20):
            x = x * 1.5
        assert len(lazy.PENDING) < 8
        assert any("max_pending" in b for b in lazy.breaks()[-3:])
    np.testing.assert_allclose(np.asarray(x), np.asarray(_x(3)) * 1.5 ** 20, rtol=1e-5)


def test_a_repeated_step_compiles_once():
    w = _x(4, (5, 3))
    x = _x(5, (8, 5))

    def step(w):
        loss, g = xlapy.value_and_grad(lambda w: ((x @ w) ** 2).mean())(w)
        return w - 0.1 * g, loss

    eager_w = w
    for _ in range(4):
        eager_w, eager_loss = step(eager_w)
    with xlapy.jit_scope():
        step(w)[1].item()   # warm: the first step compiles
        start = _stats()
        lazy_w = w
        for _ in range(4):
            lazy_w, loss = step(lazy_w)
            loss.item()
    assert lazy.STATS.compiles - start.compiles <= 1   # the second step's shape differs once
    assert lazy.STATS.cache_hits - start.cache_hits >= 3
    np.testing.assert_allclose(np.asarray(lazy_w), np.asarray(eager_w), rtol=1e-5)
    np.testing.assert_allclose(float(loss), float(eager_loss), rtol=1e-5)


def test_a_loop_that_never_reads_runs_each_iteration_as_one_cached_cluster():
    """The demo reads its loss every 50 steps: the pending graph is cut where an
    iteration begins again, so every cluster is one step, compiled once."""
    w = _x(6, (5, 3))
    x = _x(7, (8, 5))

    def step(w):   # some 14 operations: more than a cut needs (lazy._ITERATION_MIN)
        loss, g = xlapy.value_and_grad(
            lambda w: xnp.mean(xnp.tanh(x @ w + 0.5) ** 2) + xnp.max(w) * 0.1)(w)
        return w - 0.1 * g, loss

    eager_w = w
    for _ in range(12):
        eager_w, _ = step(eager_w)
    with xlapy.jit_scope():
        lazy_w = w
        for _ in range(2):   # warm-up
            lazy_w, loss = step(lazy_w)
        float(loss)
        start = _stats()
        for _ in range(10):
            lazy_w, loss = step(lazy_w)
        float(loss)
        assert lazy.STATS.compiles == start.compiles
        assert lazy.STATS.clusters - start.clusters == 10
        assert sum("next iteration began" in b for b in lazy.breaks()[-10:]) == 9
    np.testing.assert_allclose(np.asarray(lazy_w), np.asarray(eager_w), rtol=1e-5)


def _rnn(h, w, u, xs):
    for x in xs:   # four operations a time step: a period under lazy._ITERATION_MIN
        h = xnp.tanh(h @ w + x @ u)
    return h.sum()


def test_a_loop_inside_the_step_is_not_the_programs_next_iteration():
    """An eager RNN's time steps repeat the step's first operations: they are a
    loop inside the step, so the forward pass runs as one cluster per read (it
    was cut into one per two time steps); a loop of tiny steps that reads
    nothing is still cut, in clusters of whole periods of one structure."""
    h, w, u = _x(1, (4, 8)), _x(2, (8, 8)), _x(3, (5, 8))
    xs = [_x(10 + t, (4, 5)) for t in range(12)]
    eager = float(_rnn(h, w, u, xs))
    with xlapy.jit_scope():
        float(_rnn(h, w, u, xs))   # warm-up
        start = _stats()
        values = [float(_rnn(h, w, u, xs)) for _ in range(4)]
        assert lazy.STATS.clusters - start.clusters == 4
        assert lazy.STATS.compiles == start.compiles
        assert not any("next iteration" in b for b in _breaks_since(start.clusters))
    np.testing.assert_allclose(values, eager, rtol=1e-5)

    v = _x(4, (6,))
    with xlapy.jit_scope():
        start = _stats()
        for _ in range(300):
            v = v * 0.5 + 1.0
        got = np.asarray(v)
        cuts = [b for b in _breaks_since(start.clusters) if "next iteration" in b]
    sizes = {int(b.split("a cluster of ")[1].split()[0]) for b in cuts}
    assert cuts and len(sizes) == 1 and sizes.pop() >= lazy._INNER_LOOP_SPAN
    np.testing.assert_allclose(got, 2.0, rtol=1e-6)   # (1 + v/2 converges to 2)


def test_a_minibatch_loop_slicing_a_concrete_dataset_compiles_its_step_once():
    """`X[j:j + B]` of a concrete dataset is sliced on the spot (a view), so the
    step's cluster takes the batch as a leaf: every offset runs the same
    program from its tape (recorded, each offset was a new program: a compile
    per batch)."""
    data = _x(8, (40, 5))
    w = _x(9, (5, 3))
    eager = [float(xnp.tanh(data[j:j + 4] @ w).sum()) for j in range(0, 40, 4)]
    with xlapy.jit_scope():
        got = [float(xnp.tanh(data[j:j + 4] @ w).sum()) for j in range(0, 8, 4)]
        start = _stats()
        got += [float(xnp.tanh(data[j:j + 4] @ w).sum()) for j in range(8, 40, 4)]
        assert lazy.STATS.compiles == start.compiles
        assert lazy.STATS.taped - start.taped == 8
    np.testing.assert_allclose(got, eager, rtol=1e-5)


def test_an_update_in_place_reuses_the_dead_value_buffer():
    """`w = w * 0.5 + 1` in a loop: the buffer of the value two steps back is dead
    and is written again, so a 2 MiB parameter takes two buffers, not one per step."""
    w = xnp.asarray(np.ones((512, 1024), np.float32))
    addresses = []
    with xlapy.jit_scope():
        for _ in range(12):
            w = w * 0.5 + 1.0
            xlapy.block_until_ready(w)
            addresses.append(np.asarray(w).__array_interface__["data"][0])
        kept = np.asarray(w)          # a value the program holds is never reused ...
        w = w * 0.5 + 1.0
        xlapy.block_until_ready(w)
        w = w * 0.5 + 1.0
        xlapy.block_until_ready(w)
    assert len(set(addresses[2:])) == 2, addresses
    np.testing.assert_allclose(kept, 2.0 - 0.5 ** 12, rtol=1e-6)   # ... nor overwritten
    np.testing.assert_allclose(np.asarray(w), 2.0 - 0.5 ** 14, rtol=1e-6)


def test_values_not_used_again_are_fused_away():
    with xlapy.jit_scope():
        x = _x(6)
        kept = xnp.exp(x) + 1.0          # its exp is never held: computed, not stored
        xlapy.block_until_ready(kept)
    executable = next(reversed(lazy_cluster.CACHE.values()))
    assert len(executable.module.entry_computation.root_instruction.shape.tuple_shapes) == 1


def test_values_only_garbage_holds_are_not_outputs():
    """A handle kept only by a reference cycle the program dropped is not an output
    (the cluster's structure stays that of the step, so it compiles once)."""
    class Cycle:
        pass

    x = _x(4)
    gc.disable()   # (an automatic collection would free the cycle before the flush)
    try:
        with xlapy.jit_scope():
            start = _stats()
            for _ in range(3):
                cycle = Cycle()
                cycle.me, cycle.value = cycle, xnp.exp(x) * 3.0
                del cycle
                kept = xnp.tanh(x) + 1.0
                xlapy.block_until_ready(kept)
    finally:
        gc.enable()
    assert lazy.STATS.compiles - start.compiles <= 1
    executable = next(reversed(lazy_cluster.CACHE.values()))
    assert len(executable.module.entry_computation.root_instruction.shape.tuple_shapes) == 1
    np.testing.assert_allclose(np.asarray(kept), np.tanh(np.asarray(x)) + 1, rtol=1e-6)


def test_a_value_read_through_a_node_outside_the_pending_graph():
    """A stand-in's copy leaves the pending graph once its recording is cut out; a
    value still reading it, and a handle kept on it, are computed all the same."""
    with xlapy.jit_scope():
        x = _x(3)
        stand = lazy.stand_in(x)
        y = xnp.exp(stand) + 1.0
        lazy.unmark([stand._node], [])   # the copy dropped, y left pointing at it
        assert stand._node.order not in lazy.PENDING
        np.testing.assert_allclose(np.asarray(y), np.exp(np.asarray(x)) + 1, rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(stand), np.asarray(x))


def test_a_prefix_run_reads_a_node_outside_the_pending_graph():
    """The same where the cut is a prefix of the graph (its size limit reached)."""
    x = xnp.asarray(np.arange(6, dtype=np.float32))
    with flags_set("--xlapy_lazy_max_pending=6"), xlapy.jit_scope():
        xlapy.block_until_ready((xnp.exp(x) + 1.0) * 2.0 - 1.0)   # (the calls learned)
        stand = lazy.stand_in(x)
        y = xnp.exp(stand) + 1.0
        lazy.unmark([stand._node], [])
        clusters = lazy.STATS.clusters
        w = y * 2.0 - 1.0
        for _ in range(3):   # more pending operations than the limit: a prefix runs
            w = w + 0.0
        assert lazy.STATS.clusters > clusters and w._value is None
        np.testing.assert_allclose(np.asarray(w), (np.exp(np.arange(6)) + 1) * 2 - 1,
                                   rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(stand), np.arange(6))


def test_uncompilable_operations_break_the_cluster_with_their_reason():
    x = xnp.asarray(np.array([3.0, 1.0, 3.0, 2.0], np.float32))
    before = lazy.STATS.clusters   # (the list of breaks keeps only the last 1000)
    with xlapy.jit_scope():
        u = xnp.unique(x * 2.0)          # data-dependent output shape
        nz = xnp.nonzero(u > 4.0)[0]
        total = (u + 1.0).sum() + nz.sum()
        got = float(total)
    u_np = np.unique(np.array([6, 2, 6, 4.0]))
    assert got == pytest.approx((u_np + 1).sum() + np.nonzero(u_np > 4)[0].sum())
    reasons = _breaks_since(before)
    assert any("needs the value" in r and "test_lazy.py" in r for r in reasons), reasons


def test_grad_and_random_keys_in_lazy_mode():
    key = xlapy.random.PRNGKey(0)
    eager = xlapy.grad(lambda w: xnp.sum(xnp.sin(w) * xlapy.random.normal(key, (3,))))(
        xnp.ones(3))
    with xlapy.jit_scope():
        noise = xlapy.random.normal(key, (3,))
        g = xlapy.grad(lambda w: xnp.sum(xnp.sin(w) * noise))(xnp.ones(3))
        assert type(g) is LazyArray
        np.testing.assert_allclose(np.asarray(g), np.asarray(eager), rtol=1e-6)


def test_lazy_values_pass_to_jit_and_back():
    f = xlapy.jit(lambda a: a * 3.0)
    with xlapy.jit_scope():
        y = f(_chain(_x(7))) + 1.0
        np.testing.assert_allclose(np.asarray(y), np.asarray(_chain(_x(7))) * 3 + 1, rtol=1e-6)


def test_auto_jit_flag_and_small_clusters_interpreted():
    with flags_set("--xla_auto_jit=2"):
        assert lazy.active()
        y = _chain(_x(8))
        assert type(y) is LazyArray
        np.asarray(y)
    assert not lazy.active()
    start = _stats()
    with flags_set("--xla_min_cluster_size=100"), xlapy.jit_scope():
        np.asarray(_chain(_x(9)))
    assert lazy.STATS.interpreted > start.interpreted and lazy.STATS.compiles == start.compiles


def test_clustering_debug_dumps_clusters_and_breaks(tmp_path):
    with flags_set(f"--xla_dump_to={tmp_path} --xla_clustering_debug"), xlapy.jit_scope():
        np.asarray(_chain(_x(10)) * 7.0)
    names = os.listdir(tmp_path)
    assert any(n.startswith("cluster_") and n.endswith(".hlo.txt") for n in names), names
    assert "np.asarray" in (tmp_path / "clustering_breaks.txt").read_text()


def test_a_long_eager_loop_keeps_its_graph_and_memory_bounded():
    w = xnp.asarray(np.ones(64, np.float32))
    with flags_set("--xlapy_lazy_max_pending=256"), xlapy.jit_scope():
        for _ in range(1000):   # warm: compile the repeated cluster once
            w = w * 0.999 + 0.001
        xlapy.block_until_ready(w)
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(10_000):
            w = w * 0.999 + 0.001
        xlapy.block_until_ready(w)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        assert len(lazy.PENDING) <= 256
    assert grown < 2_000_000, grown
    np.testing.assert_allclose(np.asarray(w), np.ones(64), rtol=1e-5)


def test_numpy_suite_in_lazy_mode():
    """The whole xlapy.numpy test suite, a second time, with every eager op lazy,
    where every xnp call's result is the replay of its recipe, the first call included."""
    env = dict(os.environ)
    job = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "--lazy", "tests/numpy",
                          "-p", "no:cacheprovider"], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                         timeout=1800, env=env)
    assert job.returncode == 0, job.stdout[-4000:] + job.stderr[-2000:]
