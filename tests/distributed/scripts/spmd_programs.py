"""pmap and shard_map in each process of a job, on the interpreter and the CPU
backend, against NumPy computing every device's view: the lax collectives,
axis_index, gradients through them, and a 2-D mesh with a psum over one axis."""

from __future__ import annotations

import numpy as np

import xlapy
from xlapy import distributed, lax
from xlapy.sharding import P, make_mesh

distributed.initialize()
R, N = distributed.process_index(), distributed.process_count()


def x_of(d, shape=(N, 3)):
    return np.random.default_rng(d).standard_normal(shape).astype(np.float32)


def close(got, want, what):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5,
                               err_msg=f"rank {R}: {what}")


for backend in ("interpreter", "cpu"):
    xs = [x_of(d) for d in range(N)]

    def body(x):
        return (lax.psum(x, "i"), lax.pmean(x, "i"), lax.pmax(x, "i"), lax.pmin(x, "i"),
                lax.all_gather(x, "i"), lax.all_gather(x, "i", axis=1, tiled=True),
                lax.psum_scatter(x, "i"), lax.psum_scatter(x, "i", scatter_dimension=1,
                                                            tiled=True) if 3 % N == 0 else x,
                lax.ppermute(x, "i", [(j, (j + 1) % N) for j in range(N)]),
                lax.all_to_all(x, "i", 0, 0), lax.axis_index("i"))
    got = xlapy.pmap(body, "i", backend=backend)(xs[R][None])
    got = [np.asarray(g)[0] for g in got]
    stack = np.stack(xs)
    close(got[0], stack.sum(0), "psum")
    close(got[1], stack.mean(0), "pmean")
    close(got[2], stack.max(0), "pmax")
    close(got[3], stack.min(0), "pmin")
    close(got[4], stack, "all_gather")
    close(got[5], np.concatenate(xs, axis=1), "all_gather tiled")
    close(got[6], stack.sum(0)[R], "psum_scatter")
    close(got[8], xs[(R - 1) % N], "ppermute")
    close(got[9], stack[:, R], "all_to_all")
    assert int(got[10]) == R, got[10]

    # gradients through the collectives (JAX's pmap transposes: psum's is psum)
    def loss(w, x):
        h = lax.all_gather(x * w, "i", tiled=True)
        shifted = lax.ppermute(h, "i", [(j, (j + 1) % N) for j in range(N)])
        return lax.psum((shifted ** 2).sum(), "i")
    w = np.float32(1.5)
    g = xlapy.pmap(xlapy.grad(loss), "i", in_axes=(None, 0), backend=backend)(w, xs[R][None])
    # loss = N w^2 sum_d |x_d|^2 on every device. Transposed as JAX's pmap does: psum's
    # cotangent is psum(1) = N; the permute sends it back; all-gather's transpose sums
    # the N devices' cotangents of this device's block: d/dw = 2 N^2 w |x_R|^2
    close(np.asarray(g)[0], 2 * N ** 2 * w * float((xs[R].astype(np.float64) ** 2).sum()),
          "grad through gather/permute/psum")

    # data-parallel gradients: pmean of per-device gradients == the gradient of the mean
    def mse(wv, x):
        return ((x @ wv) ** 2).mean()

    def step(wv, x):
        return lax.pmean(xlapy.grad(mse)(wv, x), "i")
    wv = np.linspace(-1, 1, 3).astype(np.float32)
    got = np.asarray(xlapy.pmap(step, "i", in_axes=(None, 0), backend=backend)(wv, xs[R][None]))[0]
    want = np.mean([2 * x.T @ (x @ wv) / x.shape[0] for x in xs], axis=0)
    close(got, want, "pmean of gradients")

    # shard_map on global arrays: a 1-D mesh
    mesh = make_mesh((N,), ("x",))
    A = np.arange(4 * N * 3, dtype=np.float32).reshape(4 * N, 3)
    f = xlapy.shard_map(lambda a: lax.psum(a.sum(0), "x"), mesh, in_specs=(P("x", None),),
                        out_specs=P())
    f.backend = backend
    close(f(A), A.sum(0), "shard_map psum")
    g2 = xlapy.shard_map(lambda a: a * (lax.axis_index("x") + 1), mesh, in_specs=(P("x"),),
                         out_specs=P("x"))
    g2.backend = backend
    close(g2(A), A * np.repeat(np.arange(1, N + 1), 4)[:, None], "shard_map blocks")
    if N == 4:   # a 2x2 mesh: reduce over one axis only
        mesh2 = make_mesh((2, 2), ("a", "b"))
        B = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
        h = xlapy.shard_map(lambda b: lax.psum(b, "b"), mesh2, in_specs=(P("a", "b"),),
                            out_specs=P("a", None))
        h.backend = backend
        want = np.concatenate([B[:2, :3] + B[:2, 3:], B[2:, :3] + B[2:, 3:]], axis=0)
        close(h(B), want, "2-D mesh psum over b")
        k = xlapy.shard_map(lambda b: b + 10 * lax.axis_index("a") + lax.axis_index("b"),
                            mesh2, in_specs=(P("a", "b"),), out_specs=P("a", "b"))
        k.backend = backend
        bump = np.array([[0, 0, 0, 1, 1, 1]] * 2 + [[10, 10, 10, 11, 11, 11]] * 2, np.float32)
        close(k(B), B + bump, "2-D mesh axis_index")

print(f"PASS {R}", flush=True)
