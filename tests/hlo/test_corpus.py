"""The corpus: real-format HLO modules (tests/hlo/corpus/*.hlo) that must parse,
verify, print back identically, and run in the interpreter with XLA's results.

The modules are written exactly as XLA prints them: JAX's short form (lowered
with `jax.jit(f).lower(...)`), the long form of compiled modules (fusions,
`is_scheduled=true`, aliasing), and newer XLA's frame tables. Expected outputs
come from plain NumPy in corpus_cases.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from tests.hlo.corpus_cases import CASES, NO_OPERAND_SHAPES, Case, total_order_key
from xlapy.hlo import parse, verify
from xlapy.hlo.attributes import ComputationLayout, InputOutputAlias

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(CORPUS.glob("*.hlo"))
IDS = [p.stem for p in FILES]
INSTRUCTION_LINE = re.compile(r"^\s*(ROOT )?%?[\w.\-]+ = ")


def is_short_form(text: str) -> bool:
    """JAX's short form names no computation with `%` (and prints no signatures)."""
    return not re.search(r"^(ENTRY )?%[\w.\-]+ \(", text, re.MULTILINE)


def test_corpus_has_at_least_twenty_modules_each_with_cases():
    assert len(FILES) >= 20
    assert sorted(p.name for p in FILES) == sorted(CASES)
    assert all(CASES[name] for name in CASES)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_parses(path):
    text = path.read_text()
    module = parse(text)
    assert module.name == text.split()[1].rstrip(",")
    assert module.entry_computation is not None
    assert module.entry_computation is module.computations[-1]
    parsed = sum(len(c.instructions) for c in module.computations)
    assert parsed == sum(bool(INSTRUCTION_LINE.match(line)) for line in text.splitlines())
    if "StackFrames" in text:
        assert "StackFrames" in module.frame_tables
        frames = [i.attrs["metadata"].get("stack_frame_id") for c in module.computations
                  for i in c.instructions if "metadata" in i.attrs]
        assert any(isinstance(f, int) and f > 0 for f in frames)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_header_attributes_are_typed(path):
    """Every file carries entry_computation_layout (XLA always prints it); it must be
    read as a ComputationLayout that agrees with the entry's signature."""
    module = parse(path.read_text())
    layout = module.attributes["entry_computation_layout"]
    assert isinstance(layout, ComputationLayout)
    params, result = module.entry_computation.program_shape()
    assert len(layout.parameter_shapes) == len(params)
    assert all(a.compatible(b) for a, b in zip(layout.parameter_shapes, params))
    assert layout.result_shape.compatible(result)
    for alias in module.attributes.get("input_output_alias", ()):
        assert isinstance(alias, InputOutputAlias)
        assert alias.kind == "may-alias" and alias.output_index == (alias.parameter_number,)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_verifies(path):
    verify(parse(path.read_text()))


@pytest.mark.parametrize("short", [False, True], ids=["long", "short"])
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_round_trips(path, short):
    module = parse(path.read_text())
    t1 = module.to_text(short=short)
    again = parse(t1)
    assert again == module
    assert again.to_text(short=short) == t1


REPRODUCIBLE = [p for p in FILES if p.name not in NO_OPERAND_SHAPES]


@pytest.mark.parametrize("path", REPRODUCIBLE, ids=[p.stem for p in REPRODUCIBLE])
def test_prints_exactly_as_xla_does(path):
    """Each file is XLA's own printing of its module, so our printer, in the same
    form, must give back the file itself (trailing blank lines aside)."""
    text = path.read_text()
    printed = parse(text).to_text(short=is_short_form(text))
    assert printed.rstrip("\n").splitlines() == text.rstrip("\n").splitlines()


def run_cases():
    for path in FILES:
        for i, case in enumerate(CASES[path.name]):
            yield pytest.param(path, case, id=f"{path.stem}-{i}")


@pytest.mark.parametrize("path,case", list(run_cases()))
def test_runs_in_interpreter(path, case: Case):
    text = path.read_text()

    def run(inputs):
        return xlapy.execute(text, list(inputs), backend="interpreter")

    if case.check is not None:
        case.check(run)
        return
    outputs = run(case.inputs)
    assert len(outputs) == len(case.expected)
    for i, (actual, expected) in enumerate(zip(outputs, case.expected)):
        assert_matches(actual, expected, case, f"output {i}")


def assert_matches(actual, expected, case: Case, where: str) -> None:
    """Same dtype and shape; integers exact; floats within the case's tolerance,
    or bit for bit where the case asks (NaN signs, -0)."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_matches(a, e, case, f"{where}[{i}]")
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), where
    kind = expected.dtype.kind
    if kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=where)
    elif case.bitwise:
        width = f"u{expected.dtype.itemsize}" if kind != "c" else f"u{expected.dtype.itemsize // 2}"
        np.testing.assert_array_equal(actual.view(width), expected.view(width), err_msg=where)
    else:
        wide = np.complex128 if kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide), rtol=case.rtol,
                                   atol=case.atol, equal_nan=True, err_msg=where)


# -- random inputs on a few modules whose semantics are sharpest ----------------------
@pytest.fixture(scope="module")
def executables():
    def load(name):
        return xlapy.compile(parse((CORPUS / name).read_text()), backend="interpreter")

    return {name: load(name) for name in
            ("sort_descending_totalorder.hlo", "jax_scatter_add.hlo",
             "jax_argmax_variadic_reduce.hlo")}


SPECIAL_FLOATS = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.5])
FLOATS = st.one_of(SPECIAL_FLOATS, st.floats(-1e6, 1e6, width=32))


@given(st.lists(FLOATS, min_size=12, max_size=12))
def test_sort_matches_total_order_on_random_keys(executables, keys):
    keys = np.array(keys, np.float32).reshape(2, 6)
    payload = np.arange(12, dtype=np.float32).reshape(2, 6)
    got_keys, perm, got_payload = executables["sort_descending_totalorder.hlo"].execute(
        keys, payload)
    want = np.argsort(-total_order_key(keys), axis=1, kind="stable")
    np.testing.assert_array_equal(perm, want)
    np.testing.assert_array_equal(got_keys.view(np.uint32),
                                  np.take_along_axis(keys, want, 1).view(np.uint32))
    np.testing.assert_array_equal(got_payload, np.take_along_axis(payload, want, 1))


@given(st.lists(st.integers(-12, 12), min_size=5, max_size=5),
       st.lists(st.integers(-100, 100), min_size=5, max_size=5))
def test_scatter_add_drops_out_of_bounds_on_random_indices(executables, idx, updates):
    x = np.arange(6, dtype=np.float32)
    idx, y = np.array(idx, np.int32), np.array(updates, np.float32)
    (got,) = executables["jax_scatter_add.hlo"].execute(x, idx, y)
    want = x.copy()
    for i, v in zip(np.where(idx < 0, idx + 6, idx), y):
        if 0 <= i < 6:
            want[i] += v
    np.testing.assert_array_equal(got, want)


@given(st.lists(FLOATS, min_size=12, max_size=12))
def test_argmax_picks_first_max_or_nan_on_random_rows(executables, values):
    x = np.array(values, np.float32).reshape(3, 4)
    (got,) = executables["jax_argmax_variadic_reduce.hlo"].execute(x)
    np.testing.assert_array_equal(got, np.argmax(x, axis=1).astype(np.int32))
