"""Lazy mode's step tape: a step recorded like the last one runs from its tape,
with the values the step would have without it (bit for bit: the same
executable on the same leaves), and every way a step can differ from its tape
(another op, another shape, an operand from elsewhere, a value read early,
another result held, a recipe learned) leaves the tape and computes what the
step records."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from xlapy.core import lazy, lazy_steps
from xlapy.flags import flags_set


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
    params = {"w": rng.standard_normal((6, 3)).astype(np.float32) * 0.1,
              "b": np.zeros(3, np.float32)}
    return params, x, y


def _loss(params, x, y):
    logits = x @ params["w"] + params["b"]
    shifted = logits - xnp.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=-1, keepdims=True))
    return -xnp.mean(xnp.sum(y * log_probs, axis=-1))


def _step(params, x, y, lr=0.3):
    value, grads = xlapy.value_and_grad(_loss)(params, x, y)
    return {k: params[k] - lr * grads[k] for k in params}, value


def _train(steps: int, tape: bool, step=_step, data=None):
    """(losses, final params, steps run from a tape) of `steps` lazy steps."""
    params, x, y = data or _data()
    losses = []
    with flags_set(f"--xlapy_lazy_tape={str(tape).lower()}"), xlapy.jit_scope():
        taped = lazy.STATS.taped
        for i in range(steps):
            params, value = step(params, x, y, i)
            losses.append(float(value))
        taped = lazy.STATS.taped - taped
    return np.array(losses), {k: np.asarray(v) for k, v in params.items()}, taped


def _plain(params, x, y, i):
    return _step(params, x, y)


def test_a_repeated_step_runs_from_its_tape_with_the_same_values():
    losses, params, taped = _train(8, True, _plain)
    reference, reference_params, none = _train(8, False, _plain)
    assert none == 0 and taped >= 5
    np.testing.assert_array_equal(losses, reference)
    for k in params:
        np.testing.assert_array_equal(params[k], reference_params[k])
    assert losses[-1] < losses[0]


def _check_against_untaped(step, steps=8, min_taped=0):
    losses, params, taped = _train(steps, True, step)
    reference, reference_params, _ = _train(steps, False, step)
    np.testing.assert_array_equal(losses, reference)
    for k in params:
        np.testing.assert_array_equal(params[k], reference_params[k])
    assert taped >= min_taped
    return taped


def test_a_step_with_another_op_leaves_the_tape():
    def step(params, x, y, i):
        params, value = _step(params, x, y)
        if i % 3 == 2:   # every third step: one more op, in the middle of the step
            params = {"w": xnp.tanh(params["w"]), "b": params["b"]}
        return params, value
    assert _check_against_untaped(step, steps=12) < 12


def test_a_step_with_another_shape_leaves_the_tape():
    params, x, y = _data()

    def step(params, x_, y_, i):
        rows = 8 if i % 4 else 5   # a shorter batch now and then
        return _step(params, x[:rows], y[:rows])
    _check_against_untaped(step, steps=12, min_taped=2)


def test_another_learning_rate_array_is_a_leaf_not_a_new_tape():
    def step(params, x, y, i):
        return _step(params, x, y, lr=np.asarray(0.3 / (1 + i), np.float32))
    _check_against_untaped(step, min_taped=4)


def test_a_value_read_early_leaves_the_tape():
    seen = []

    def step(params, x, y, i):
        new, value = _step(params, x, y)
        if i == 5:
            seen.append(float(new["b"].sum()))   # read before the loss
        return new, value
    _check_against_untaped(step)
    assert len(seen) == 2 and seen[0] == seen[1]


def test_another_held_result_is_computed():
    kept = []

    def step(params, x, y, i):
        logits = x @ params["w"]
        new, value = _step(params, x, y)
        if i >= 4:
            kept.append(logits)   # held past the read from step 4 on
        return new, value
    _check_against_untaped(step, steps=8)
    values = [np.asarray(k) for k in kept]
    assert len(values) == 8 and all(v.shape == (8, 3) for v in values)
    np.testing.assert_array_equal(values[:4], values[4:])


def test_one_value_where_the_tape_had_two_and_two_where_it_had_one():
    params, x, y = _data()
    x2 = x + 1.0   # another value (another object alone would compute the same)

    def step(params, x_, y_, i):
        a, b = (x, x2) if i >= 4 and i % 2 else (x, x)   # one value for four steps first
        value, grads = xlapy.value_and_grad(lambda p: _loss(p, a, y) + _loss(p, b, y))(params)
        return {k: params[k] - 0.1 * grads[k] for k in params}, value
    _check_against_untaped(step, steps=10)


def test_a_grad_of_another_output_of_the_same_ops_leaves_the_tape():
    def step(params, x, y, i):
        def loss(p):
            first, second = _loss(p, x, y), _loss(p, x * 2.0, y)   # both, every step
            return second if i >= 4 and i % 2 else first
        value, grads = xlapy.value_and_grad(loss)(params)
        return {k: params[k] - 0.1 * grads[k] for k in params}, value
    _check_against_untaped(step, steps=10)


def test_a_closure_over_a_changing_array_is_seen_every_step():
    params, x, y = _data()
    scales = [np.full((6, 3), 1.0 + i, np.float32) for i in range(8)]

    def step(params, x_, y_, i):
        scale = scales[i]
        value, grads = xlapy.value_and_grad(
            lambda p: _loss({"w": p["w"] * scale, "b": p["b"]}, x, y))(params)
        return {k: params[k] - 0.1 * grads[k] for k in params}, value
    _check_against_untaped(step, min_taped=4)


def test_a_new_recipe_learned_mid_step_leaves_the_tape():
    def step(params, x, y, i):
        new, value = _step(params, x, y)
        if i == 5:
            new = {"w": new["w"], "b": xnp.clip(new["b"], -0.05 * i, 0.05 * i)}   # new here
        return new, value
    _check_against_untaped(step)


def test_a_shape_list_changed_in_place_and_a_new_scalar_are_seen():
    data = np.arange(18, dtype=np.float32).reshape(6, 3)
    x = xnp.asarray(data)
    shape = [3, 6]   # one list object, changed between steps: not the shape it was
    got, expected = [], []
    with xlapy.jit_scope():
        taped = lazy.STATS.taped
        for i in range(12):
            if i == 8:   # (by now the tape makes reshape's node from its plan)
                shape[:] = [2, 9]
            scale = 0.5 if i == 10 else 2.0
            rows = xnp.reshape(x * 1.0, shape)
            got.append(float((rows[-1, :3] * scale).sum()))
            expected.append(float((data.reshape(shape)[-1, :3] * scale).sum()))
        taped = lazy.STATS.taped - taped
    assert got == expected
    assert taped >= 5


def test_steps_of_several_kinds_each_run_from_their_own_tape():
    """Kinds that begin alike and part at an op, at a grad's outputs, or where a
    value is read each keep a tape: after a round of each, every step is taped."""
    def step(params, x, y, i):
        kind = i % 4
        if kind == 1:   # grad of the loss with an aux output: same ops, another cut-out
            (value, _), grads = xlapy.value_and_grad(
                lambda p: (_loss(p, x, y), xnp.sum(p["b"])), has_aux=True)(params)
            new = {k: params[k] - 0.3 * grads[k] for k in params}
        else:
            new, value = _step(params, x, y)
        if kind == 2:   # an extra op and a value read before the loss
            float(xnp.sum(new["w"] * new["w"]))
        if kind == 3:   # the step ends early: an intermediate read, the loss after
            float(xnp.max(new["b"]))
        return new, value
    taped = _check_against_untaped(step, steps=24)
    assert taped >= 15


def _train_unread(steps: int, tape: bool):
    """(final params, steps run from a tape) of a loop that reads nothing until
    its end: each step is cut where the next iteration begins."""
    params, x, y = _data()
    with flags_set(f"--xlapy_lazy_tape={str(tape).lower()}"), xlapy.jit_scope():
        taped = lazy.STATS.taped
        for _ in range(steps):
            params, value = _step(params, x, y)
        final = {k: np.asarray(v) for k, v in params.items()}, float(value)
        return final, lazy.STATS.taped - taped


def test_a_loop_that_reads_nothing_runs_its_steps_from_the_tape():
    (params, value), taped = _train_unread(12, True)
    (reference, reference_value), none = _train_unread(12, False)
    assert none == 0 and taped >= 6
    assert value == reference_value
    for k in params:
        np.testing.assert_array_equal(params[k], reference[k])


def test_tapes_stay_bounded_over_many_kinds_of_step():
    x = xnp.asarray(np.ones((4, 4), np.float32))
    with xlapy.jit_scope():
        for n in range(lazy_steps.MAX_TAPES * 3):
            for _ in range(3):
                float((x * float(n)).sum())
    assert len(lazy_steps.TAPES) <= lazy_steps.MAX_TAPES


@pytest.mark.parametrize("tape", [True, False])
def test_the_flag_turns_the_tape_off(tape):
    _, _, taped = _train(6, tape, _plain)
    assert (taped > 0) == tape


_OPS = [
    lambda a, b: a + b,
    lambda a, b: a * 0.5 - b,
    lambda a, b: xnp.tanh(a),
    lambda a, b: a @ b,
    lambda a, b: xnp.maximum(a, 0.0) + xnp.sum(b, axis=0),
    lambda a, b: xlapy.grad(lambda p: (xnp.sin(p) * b).sum())(a),
]
_PROGRAM = st.lists(st.tuples(st.integers(0, len(_OPS) - 1), st.integers(0, 9),
                              st.integers(0, 9)), min_size=1, max_size=6)


def _run_schedule(programs, schedule, keep: int, tape: bool, reads=(True,)):
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((4, 4)).astype(np.float32) * 0.5 for _ in range(2)]
    seen, kept = [], []
    with flags_set(f"--xlapy_lazy_tape={str(tape).lower()}"), xlapy.jit_scope():
        for step in schedule:
            values = list(inputs)
            for op, i, j in programs[step % len(programs)]:
                values.append(_OPS[op](values[i % len(values)], values[j % len(values)]))
            if step == 2:
                kept.append(values[keep % len(values)])   # held past the read
            if reads[len(seen) % len(reads)]:   # (a step not read is cut where the next begins)
                seen.append(float(values[-1].sum()))
            else:
                seen.append(None)
            inputs = [inputs[1], xnp.tanh(values[-1])]   # the next step's input: a result
        seen.append(float(inputs[1].sum()))
    return seen, [np.asarray(k) for k in kept]


@settings(max_examples=25, deadline=None)
@given(programs=st.lists(_PROGRAM, min_size=1, max_size=3),
       schedule=st.lists(st.integers(0, 2), min_size=3, max_size=9), keep=st.integers(0, 9),
       reads=st.lists(st.booleans(), min_size=1, max_size=4))
def test_random_steps_equal_their_untaped_selves(programs, schedule, keep, reads):
    """Random steps, alike or not from one to the next: the tape's values are
    the untaped ones, bit for bit (the same executables on the same leaves)."""
    taped = _run_schedule(programs, schedule, keep, True, reads)
    untaped = _run_schedule(programs, schedule, keep, False, reads)
    np.testing.assert_array_equal(taped[0], untaped[0])
    for a, b in zip(taped[1], untaped[1]):
        np.testing.assert_array_equal(a, b)


def test_a_deleted_array_in_a_taped_step_says_so():
    w = xnp.asarray(np.ones((4, 4), np.float32))
    x = xnp.asarray(np.ones((4, 4), np.float32))
    with xlapy.jit_scope():
        taped = lazy.STATS.taped
        for _ in range(3):
            assert float(xnp.sum(xnp.tanh(x @ w) * 2.0)) == pytest.approx(16 * np.tanh(4) * 2)
        assert lazy.STATS.taped > taped
        w.delete()
        with pytest.raises(RuntimeError, match="deleted"):
            float(xnp.sum(xnp.tanh(x @ w) * 2.0))


def _joined(parts: str, h, x, y):
    """concatenate and stack of a step's pending `h` and leaves `x`, `y`, the list
    spelled by `parts`."""
    lists = {"hx": [h, x], "xh": [x, h], "tuple hx": (h, x), "hxh": [h, x, h], "hy": [h, y]}
    joined = lists[parts]
    return xnp.sum(xnp.concatenate(joined, axis=0) * 2.0) + xnp.sum(xnp.stack(joined)[0])


def test_a_list_of_arrays_is_checked_element_by_element(monkeypatch):
    """concatenate's and stack's list of arrays has a plan (it had none: each call
    spelled its signature again, ~8 µs; now ~2.3): matched steps spell no list,
    and a list with the handles swapped, a tuple for the list, another length
    or another leaf in it is taken as what it is. Every value equals eager."""
    from xlapy.core import lazy_replay
    spelled = []
    original = lazy_replay._specs
    monkeypatch.setattr(lazy_replay, "_specs", lambda values, arrays: (
        spelled.extend(v for v in values if type(v) in (list, tuple) and v
                       and hasattr(v[0], "shape")) or original(values, arrays)))
    monkeypatch.setattr(lazy_steps, "TAPES", {})
    rng = np.random.default_rng(3)
    x, y = (xnp.asarray(rng.standard_normal((4, 3)).astype(np.float32)) for _ in range(2))
    order = ["hx"] * 4 + ["xh", "hx", "tuple hx", "hx", "hxh", "hx", "hy", "hy", "hx"]
    with xlapy.jit_scope():
        got, matched = [], []
        for i, parts in enumerate(order):
            taped, count = lazy.STATS.taped, len(spelled)
            got.append(float(_joined(parts, xnp.tanh(x * float(i)), x, y)))
            matched.append(lazy.STATS.taped > taped and len(spelled) == count)
    want = [float(_joined(parts, xnp.tanh(x * float(i)), x, y)) for i, parts in enumerate(order)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert matched[2:4] == [True, True] and matched[-1]       # repeated: from the tape
    assert not any(matched[k] for k in (4, 6, 8, 10))         # another list: not taken
