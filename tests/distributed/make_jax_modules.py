"""Write the JAX collective fixtures in tests/distributed/jax_modules/ (run by hand;
needs jax): `python tests/distributed/make_jax_modules.py`.

For 2 and 4 devices, each program below becomes `NAME_nN.hlo`, the per-device
module XLA runs, and `NAME_nN.npz`, each device's parameters (`in{d}_{k}`) and
JAX's own outputs on that device (`out{d}_{k}`), computed by JAX on N host CPU
devices. Device d is the executable's logical device d (its partition id):
the fixtures' modules all have replica_count=1, num_partitions=N.

Which text, and why:
- `jax.pmap` is, since JAX 0.8, `jit` of a `shard_map` (jax/_src/pmap.py); it no
  longer lowers to a module with replica_count=N, so both forms below are
  partitioned SPMD modules.
- The pre-optimisation text (`.lower(...).as_text(dialect="hlo")`) is the
  *global* program: the body sits in a `call` between custom-calls
  `xla.sdy.GlobalToLocalShape` / `LocalToGlobalShape` / `FuncResultSharding`
  (Shardy's markers), with neither num_partitions nor per-device shapes. Only the
  SPMD partitioner gives it a meaning, so it is not a module a device runs.
- `.lower(...).compile().as_text()` is the SPMD-partitioned module with
  num_partitions=N: its entry parameters have the per-device shapes and its
  collectives use global device ids. That is the text written here.
"""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import pathlib  # noqa: E402
import re  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "jax_modules"
LR = 0.1


# -- the programs: (function of the axis name and N, per-device arguments) -------------------
# An argument is (shape, dtype, sharded): a sharded argument differs per device, a
# replicated one (sharded=False) is the same on every device.
def ring(n: int) -> list[tuple[int, int]]:
    """A shift by one around the ring of n devices."""
    return [(i, (i + 1) % n) for i in range(n)]


def mlp_loss(params, x, y):
    w1, b1, w2 = params
    return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 - y) ** 2)


def train_step(ax, w1, b1, w2, x, y):
    """Data-parallel SGD: each device's gradient of its batch's loss, averaged."""
    grads = jax.grad(mlp_loss)((w1, b1, w2), x, y)
    grads = [lax.pmean(g, ax) for g in grads]
    return tuple(p - LR * g for p, g in zip((w1, b1, w2), grads))


F32, S32 = np.float32, np.int32


def programs(n: int) -> dict:
    return {
        "psum": (lambda ax, x: lax.psum(x, ax), [((2, 3), F32, True)]),
        "psum_s32": (lambda ax, x: lax.psum(x, ax), [((2, 3), S32, True)]),
        "pmean": (lambda ax, x: lax.pmean(x, ax), [((2, 3), F32, True)]),
        "pmax": (lambda ax, x: lax.pmax(x, ax), [((2, 3), F32, True)]),
        "pmin": (lambda ax, x: lax.pmin(x, ax), [((2, 3), F32, True)]),
        "all_gather": (lambda ax, x: lax.all_gather(x, ax), [((2, 3), F32, True)]),
        "all_gather_tiled": (lambda ax, x: lax.all_gather(x, ax, axis=1, tiled=True),
                             [((2, 3), F32, True)]),
        "psum_scatter": (lambda ax, x: lax.psum_scatter(x, ax), [((n, 3), F32, True)]),
        "psum_scatter_tiled": (lambda ax, x: lax.psum_scatter(x, ax, tiled=True),
                               [((2 * n, 3), F32, True)]),
        "ppermute_ring": (lambda ax, x: lax.ppermute(x, ax, ring(n)), [((2, 3), F32, True)]),
        "all_to_all": (lambda ax, x: lax.all_to_all(x, ax, 0, 0), [((n, 3), F32, True)]),
        "all_to_all_tiled": (lambda ax, x: lax.all_to_all(x, ax, 1, 0, tiled=True),
                             [((2, 2 * n), F32, True)]),
        "axis_index": (lambda ax, x: x * 10 + lax.axis_index(ax), [((3,), S32, True)]),
        "train_step": (train_step, [((3, 4), F32, False), ((4,), F32, False),
                                    ((4, 1), F32, False), ((2, 3), F32, True),
                                    ((2, 1), F32, True)]),
    }


def mesh_programs() -> dict:
    """On a 2x2 mesh ("a", "b"): device (a, b) is device 2a + b."""
    arg = [((2, 3), F32, True)]
    return {
        "psum_a": (lambda x: lax.psum(x, "a"), arg),
        "psum_b": (lambda x: lax.psum(x, "b"), arg),
        "psum_ab": (lambda x: lax.psum(x, ("a", "b")), arg),
        "all_gather_b": (lambda x: lax.all_gather(x, "b", tiled=True), arg),
        "ppermute_a": (lambda x: lax.ppermute(x, "a", [(0, 1), (1, 0)]), arg),
        "all_to_all_b": (lambda x: lax.all_to_all(x, "b", 0, 0, tiled=True), [((4, 3), F32, True)]),
        "axis_index": (lambda x: x * 100 + lax.axis_index("a") * 10 + lax.axis_index("b"),
                       [((3,), S32, True)]),
    }


# -- inputs, running, and what each device holds -------------------------------------------
def random_array(shape, dtype, rng) -> np.ndarray:
    if dtype == S32:
        return rng.integers(-5, 6, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def per_device_values(args, n, rng):
    """values[k][d]: argument k on device d."""
    values = []
    for shape, dtype, sharded in args:
        if sharded:
            values.append([random_array(shape, dtype, rng) for _ in range(n)])
        else:
            values.append([random_array(shape, dtype, rng)] * n)
    return values


SHAPE = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\]")


def layout_shapes(text: str) -> tuple[list, list]:
    """The entry's parameter and result (dtype, shape)s, from entry_computation_layout."""
    start = text.index("entry_computation_layout={") + len("entry_computation_layout={")
    depth, end = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    params, results = text[start:end - 1].split("->")

    def shapes(part):
        return [(t, tuple(int(s) for s in dims.split(",") if s)) for t, dims in
                SHAPE.findall(part)]
    return shapes(params), shapes(results)


HLO_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.int32): "s32"}


def shards_by_device(array, devices):
    """The value each of `devices` (in logical order) holds of a jax.Array."""
    held = {s.device: np.asarray(s.data) for s in array.addressable_shards}
    return [held[d] for d in devices]


def write(name: str, compiled, global_args, outputs, n: int) -> None:
    text = compiled.as_text()
    assert f"num_partitions={n}" in text and "custom-call" not in text, name
    shardings = jax.tree.leaves(compiled.input_shardings)
    devices = list(shardings[0]._device_assignment)
    assert len(devices) == n and all(s._device_assignment == tuple(devices) for s in shardings)
    placed = [jax.device_put(a, s) for a, s in zip(global_args, shardings)]
    inputs = [shards_by_device(a, devices) for a in placed]
    results = [shards_by_device(o, devices) for o in jax.tree.leaves(outputs)]
    params, outs = layout_shapes(text)
    for declared, held in ((params, inputs), (outs, results)):
        assert len(declared) == len(held), (name, declared)
        for (t, dims), per_device in zip(declared, held):
            for value in per_device:
                assert (HLO_NAMES[value.dtype], value.shape) == (t, dims), (name, t, dims)
    arrays = {f"in{d}_{k}": inputs[k][d] for k in range(len(inputs)) for d in range(n)}
    arrays |= {f"out{d}_{k}": results[k][d] for k in range(len(results)) for d in range(n)}
    (OUT / f"{name}_n{n}.hlo").write_text(text)
    np.savez(OUT / f"{name}_n{n}.npz", **arrays)


def make_pmap(name, fn, args, n, rng):
    values = per_device_values(args, n, rng)
    in_axes = tuple(0 if sharded else None for _, _, sharded in args)
    global_args = [np.stack(v) if sharded else v[0] for v, (_, _, sharded) in zip(values, args)]
    mapped = jax.pmap(lambda *xs: fn("i", *xs), axis_name="i", in_axes=in_axes,
                      devices=jax.devices()[:n])
    write(f"pmap_{name}", mapped.lower(*global_args).compile(), global_args,
          mapped(*global_args), n)


def make_shard_map(prefix, fn, args, mesh, spec, rng, check_vma=True):
    n = mesh.size
    values = per_device_values(args, n, rng)
    global_args = [np.concatenate(v) if sharded else v[0]
                   for v, (_, _, sharded) in zip(values, args)]
    in_specs = tuple(P(spec) if sharded else P() for _, _, sharded in args)
    mapped = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=P(spec),
                                   check_vma=check_vma))
    placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(global_args, in_specs)]
    write(prefix, mapped.lower(*placed).compile(), global_args, mapped(*placed), n)


def check_train_step(n: int) -> None:
    """The data-parallel step equals one SGD step on the whole batch (its mean loss)."""
    data = np.load(OUT / f"pmap_train_step_n{n}.npz")
    params = [data[f"in0_{k}"] for k in range(3)]
    x = np.concatenate([data[f"in{d}_3"].reshape(-1, 3) for d in range(n)])
    y = np.concatenate([data[f"in{d}_4"].reshape(-1, 1) for d in range(n)])
    grads = jax.grad(mlp_loss)(tuple(params), x, y)
    for k, (p, g) in enumerate(zip(params, grads)):
        np.testing.assert_allclose(data[f"out0_{k}"].reshape(p.shape), p - LR * np.asarray(g),
                                   rtol=1e-5, atol=1e-6)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for old in list(OUT.glob("*.hlo")) + list(OUT.glob("*.npz")):
        old.unlink()
    rng = np.random.default_rng(20240611)
    for n in (2, 4):
        mesh = Mesh(np.array(jax.devices()[:n]), ("i",))
        for name, (fn, args) in programs(n).items():
            make_pmap(name, fn, args, n, rng)
            # The step's gradients come out per device (check_vma=False), as in pmap;
            # with vma checking JAX would psum them itself before the pmean.
            make_shard_map(f"shmap_{name}", lambda *xs, fn=fn: fn("i", *xs), args, mesh, "i",
                           rng, check_vma=name != "train_step")
        check_train_step(n)
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    for name, (fn, args) in mesh_programs().items():
        make_shard_map(f"mesh2x2_{name}", fn, args, mesh, ("a", "b"), rng)
    print(f"wrote {len(list(OUT.glob('*.hlo')))} modules in {OUT}")


if __name__ == "__main__":
    main()
