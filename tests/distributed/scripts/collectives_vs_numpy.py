"""Every collective in every group mode and layout the job's size allows, run in
each process on the interpreter and the CPU backend, against NumPy computing
XLA's semantics from every device's inputs (each process can make them all)."""

from __future__ import annotations

import itertools
import sys

import ml_dtypes
import numpy as np

import xlapy
from xlapy import distributed

distributed.initialize()
RANK, N = distributed.process_index(), distributed.process_count()
BACKENDS = sys.argv[1].split(",") if len(sys.argv) > 1 else ["interpreter", "cpu"]

HLO_TYPES = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "s64": np.int64,
             "u8": np.uint8, "pred": np.bool_, "bf16": ml_dtypes.bfloat16,
             "f16": np.float16, "c64": np.complex64}
FOLD = {"add": np.add, "multiply": np.multiply, "minimum": np.minimum, "maximum": np.maximum,
        "and": np.logical_and, "or": np.logical_or}


def layouts(size: int):
    """Replica-group layouts over `size` ids: none, all (reversed), pairs, strided, ones."""
    out = [(), (tuple(reversed(range(size))),), tuple((i,) for i in range(size))]
    if size == 4:
        out += [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((3, 1), (2, 0))]
    return out


def modes():
    """(replica_count, num_partitions, mode) the job's size allows. cross-partition is
    the mode of all-to-all, collective-permute and -broadcast with a channel; the
    reductions and gathers have none (with a channel they span replicas and partitions)."""
    out = [(N, 1, "cross-replica"), (1, N, "cross-partition"), (1, N, "flattened"),
           (1, N, "cross-replica-and-partition")]
    if N == 4:
        out += [(2, 2, m) for m in ("cross-replica", "cross-partition", "flattened",
                                    "cross-replica-and-partition")]
    return out


# -- the oracle: XLA's participants, written independently of xlapy ---------------------------
def participants(mode, groups, R, P, device):
    r, p = device % R, device // R
    dev = lambda rr, pp: pp * R + rr  # noqa: E731
    size = {"cross-replica": R, "cross-partition": P, "flattened": R * P,
            "cross-replica-and-partition": R}[mode]
    me = {"cross-replica": r, "cross-partition": p, "flattened": r * P + p,
          "cross-replica-and-partition": r}[mode]
    group = next(g for g in (groups or (tuple(range(size)),)) if me in g)
    if mode == "cross-replica":
        return [dev(i, p) for i in group]
    if mode == "cross-partition":
        return [dev(r, i) for i in group]
    if mode == "flattened":
        return [dev(i // P, i % P) for i in group]
    return [dev(i, q) for i in group for q in range(P)]


def attrs(mode, groups):
    text = "replica_groups={" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups) + "}"
    if mode != "cross-replica":
        text += ", channel_id=1"
    if mode == "flattened":
        text += ", use_global_device_ids=true"
    return text


def value(t, dims, device, salt):
    rng = np.random.default_rng(1000 * device + salt)
    if t == "pred":
        return rng.random(dims) < 0.5
    if t in ("s32", "s64", "u8"):
        return rng.integers(0, 7, dims).astype(HLO_TYPES[t])
    if t == "c64":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(np.complex64)
    return rng.standard_normal(dims).astype(HLO_TYPES[t])


def reducer(t, op, name="red"):
    return (f"{name} {{\n  {name}.a = {t}[] parameter(0)\n  {name}.b = {t}[] parameter(1)\n"
            f"  ROOT {name}.c = {t}[] {op}({name}.a, {name}.b)\n}}\n")


def module(R, P, body, computations=""):
    return f"HloModule m, replica_count={R}, num_partitions={P}\n{computations}ENTRY e {{\n{body}}}\n"


CHECKED = 0
DIMS = (2, 3)


def check(text, inputs_of, expected_of, devices, tolerance):
    global CHECKED
    me = RANK
    inputs = inputs_of(me)
    for backend in BACKENDS:
        got = xlapy.execute(text, inputs, backend=backend)
        want = expected_of(me)
        got = got if isinstance(want, list) else got[0] if len(got) == 1 else got
        want = want if isinstance(want, list) else [want]
        got = got if isinstance(got, list) else [got]
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (backend, text, g.shape, w.shape)
            if tolerance:
                np.testing.assert_allclose(g.astype(np.complex128 if g.dtype.kind == "c"
                                                    else np.float64),
                                           w.astype(np.complex128 if w.dtype.kind == "c"
                                                    else np.float64),
                                           rtol=tolerance, atol=tolerance,
                                           err_msg=f"{backend}\n{text}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"{backend}\n{text}")
        CHECKED += 1


def all_reduce_cases():
    """Every reduction on its dtypes, in the first mode; sums in every mode/layout."""
    cases = [("add", t) for t in ("f32", "f64", "s32", "s64", "bf16", "f16", "c64", "u8")]
    cases += [("multiply", "f32"), ("minimum", "f32"), ("maximum", "f32"), ("minimum", "s32"),
              ("maximum", "u8"), ("and", "pred"), ("or", "pred"), ("and", "s32"),
              ("or", "u8")]
    R, P, mode = modes()[0]
    for op, t in cases:
        yield R, P, mode, (), op, t
    for (R, P, mode), groups in itertools.product(modes(), layouts(N)):
        if mode == "cross-partition":   # with a channel, all-reduce is replica-and-partition
            continue
        size = {"cross-replica": R, "cross-partition": P, "flattened": R * P,
                "cross-replica-and-partition": R}[mode]
        for g in [g for g in layouts(size)] if size != N else [groups]:
            yield R, P, mode, g, "add", "f32"


def run_all_reduce():
    seen = set()
    for R, P, mode, groups, op, t in all_reduce_cases():
        if (R, P, mode, groups, op, t) in seen:
            continue
        seen.add((R, P, mode, groups, op, t))
        text = module(R, P, f"  x = {t}[2,3] parameter(0)\n  ROOT r = {t}[2,3] all-reduce(x), "
                            f"{attrs(mode, groups)}, to_apply=red\n", reducer(t, op))
        fold = FOLD[op] if t == "pred" or op not in ("and", "or") else \
            (np.bitwise_and if op == "and" else np.bitwise_or)

        def expected(d, R=R, P=P, mode=mode, groups=groups, t=t, fold=fold):
            values = [value(t, DIMS, q, 1) for q in participants(mode, groups, R, P, d)]
            out = values[0]
            for v in values[1:]:
                out = fold(out, v)
            return np.asarray(out).astype(HLO_TYPES[t])
        tolerance = {"bf16": 2e-2, "f16": 2e-3, "f32": 1e-5, "f64": 1e-12, "c64": 1e-5}.get(t, 0)
        check(text, lambda d, t=t: [value(t, DIMS, d, 1)], expected, N, tolerance)


def run_data_movement():
    """all-gather, reduce-scatter, all-to-all, collective-broadcast, collective-permute,
    variadic and asynchronous forms, over every mode and layout."""
    for R, P, mode in modes():
        size = {"cross-replica": R, "cross-partition": P, "flattened": R * P,
                "cross-replica-and-partition": R}[mode]
        for groups in layouts(size):
            members = len(participants(mode, groups, R, P, 0))
            if len({len(participants(mode, groups, R, P, d)) for d in range(N)}) != 1:
                continue
            if mode != "cross-partition":
                _gather_scatter(R, P, mode, groups, members)
            if mode in ("cross-replica", "cross-partition"):
                _all_to_all(R, P, mode, groups, members)
                _broadcast(R, P, mode, groups)
        if mode in ("cross-replica", "cross-partition"):
            _permute(R, P, mode, size)


def _gather_scatter(R, P, mode, groups, members):
    a = attrs(mode, groups)
    for dim in (0, 1):
        out = [2, 3]
        out[dim] *= members
        text = module(R, P, f"  x = f32[2,3] parameter(0)\n  ROOT g = f32[{out[0]},{out[1]}] "
                            f"all-gather(x), dimensions={{{dim}}}, {a}\n")

        def gathered(d, dim=dim):
            return np.concatenate([value("f32", (2, 3), q, 2) for q in
                                   participants(mode, groups, R, P, d)], axis=dim)
        check(text, lambda d: [value("f32", (2, 3), d, 2)], gathered, N, 0)
    rows = 2 * members
    text = module(R, P, f"  x = f32[{rows},3] parameter(0)\n  ROOT s = f32[2,3] reduce-scatter(x),"
                        f" dimensions={{0}}, {a}, to_apply=red\n", reducer("f32", "add"))

    def scattered(d):
        group = participants(mode, groups, R, P, d)
        total = sum(value("f32", (rows, 3), q, 3).astype(np.float64) for q in group)
        i = group.index(d)
        return total[2 * i:2 * i + 2].astype(np.float32)
    check(text, lambda d: [value("f32", (rows, 3), d, 3)], scattered, N, 1e-5)
    # variadic all-reduce and the asynchronous pairs
    text = module(R, P, f"  x = f32[3] parameter(0)\n  y = f32[2] parameter(1)\n"
                        f"  s = (f32[3], f32[2]) all-reduce(x, y), {a}, to_apply=redv\n"
                        f"  v0 = f32[3] get-tuple-element(s), index=0\n"
                        f"  v1 = f32[2] get-tuple-element(s), index=1\n"
                        f"  st = f32[3] all-reduce-start(x), {a}, to_apply=redf\n"
                        f"  dn = f32[3] all-reduce-done(st)\n"
                        f"  gs = (f32[3], f32[{3 * members}]) all-gather-start(x), "
                        f"dimensions={{0}}, {a}\n"
                        f"  gd = f32[{3 * members}] all-gather-done(gs)\n"
                        f"  ROOT t = (f32[3], f32[2], f32[3], f32[{3 * members}]) "
                        f"tuple(v0, v1, dn, gd)\n",
                    reducer("f32", "add", "redv") + reducer("f32", "add", "redf"))

    def variadic(d):
        group = participants(mode, groups, R, P, d)
        xs = [value("f32", (3,), q, 4) for q in group]
        ys = [value("f32", (2,), q, 5) for q in group]
        total = np.sum(np.stack(xs).astype(np.float64), 0).astype(np.float32)
        other = np.sum(np.stack(ys).astype(np.float64), 0).astype(np.float32)
        return [total, other, total, np.concatenate(xs)]
    check(text, lambda d: [value("f32", (3,), d, 4), value("f32", (2,), d, 5)], variadic, N, 1e-5)


def _all_to_all(R, P, mode, groups, members):
    a = attrs(mode, groups)
    for dim in (0, 1):
        shape = [members, 2 * members]
        text = module(R, P, f"  x = f32[{shape[0]},{shape[1]}] parameter(0)\n"
                            f"  ROOT t = f32[{shape[0]},{shape[1]}] all-to-all(x), "
                            f"dimensions={{{dim}}}, {a}\n")

        def exchanged(d, dim=dim, shape=shape):
            group = participants(mode, groups, R, P, d)
            i = group.index(d)
            return np.concatenate([np.split(value("f32", shape, q, 6), members, axis=dim)[i]
                                   for q in group], axis=dim)
        check(text, lambda d, shape=shape: [value("f32", shape, d, 6)], exchanged, N, 0)


def _broadcast(R, P, mode, groups):
    text = module(R, P, f"  x = s32[4] parameter(0)\n  ROOT b = s32[4] collective-broadcast(x), "
                        f"{attrs(mode, groups)}\n")
    check(text, lambda d: [value("s32", (4,), d, 7)],
          lambda d: value("s32", (4,), participants(mode, groups, R, P, d)[0], 7), N, 0)


def _permute(R, P, mode, size):
    channel = ", channel_id=1" if mode == "cross-partition" else ""
    shifts = [[(i, (i + 1) % size) for i in range(size)], [(0, size - 1)],
              [(i, i) for i in range(size)]]
    for pairs in shifts:
        spelled = ",".join(f"{{{s},{t}}}" for s, t in pairs)
        text = module(R, P, f"  x = f32[5] parameter(0)\n  ROOT c = f32[5] collective-permute(x),"
                            f" source_target_pairs={{{spelled}}}{channel}\n"
                            if True else "")
        text_async = module(R, P, f"  x = f32[5] parameter(0)\n  s = (f32[5], f32[5], u32[], u32[])"
                                  f" collective-permute-start(x), source_target_pairs="
                                  f"{{{spelled}}}{channel}\n"
                                  f"  ROOT d = f32[5] collective-permute-done(s)\n")

        def permuted(d, pairs=pairs):
            r, p = d % R, d // R
            me = r if mode == "cross-replica" else p
            sources = [s for s, t in pairs if t == me]
            if not sources:
                return np.zeros(5, np.float32)
            s = sources[0]
            source = (p * R + s) if mode == "cross-replica" else (s * R + r)
            return value("f32", (5,), source, 8)
        for t in (text, text_async):
            check(t, lambda d: [value("f32", (5,), d, 8)], permuted, N, 0)


run_all_reduce()
run_data_movement()
print(f"rank {RANK}: {CHECKED} checks on {N} processes", file=sys.stderr)
print(f"PASS {RANK}", flush=True)
