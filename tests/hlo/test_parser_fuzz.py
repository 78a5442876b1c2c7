"""Parser fuzzing (issue 14): a slice of the mutation campaign, the mutation kinds,
the campaign's classification, and one regression test per bug the campaign
found, each from its smallest reproducer.

The contract: any text, or bytes, parses and verifies, or fails with a
ParseError/VerifierError that has a line and a column; never another
exception, a crash, or more than a second. The full campaign is
`python -m xlapy.fuzz.parser_campaign --count 100000 --seed 0`.
"""

from __future__ import annotations

import functools
import json
import time

import pytest

from xlapy.errors import ParseError, ShapeError, VerifierError
from xlapy.fuzz import parser_campaign
from xlapy.fuzz.mutations import KINDS, corpus, mutate
from xlapy.fuzz.parser_campaign import check_text, run_parser_campaign
from xlapy.hlo import parse, verify
from xlapy.hlo.attributes import RawAttribute
from xlapy.hlo.literal_text import MAX_ELIDED_BYTES


def module(*lines: str, header: str = "") -> str:
    body = "\n".join("  " + line for line in lines)
    return f"HloModule m{header}\n\nENTRY e {{\n{body}\n}}\n"


def parse_error(text) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text)
    error = info.value
    assert error.line >= 1 and error.column >= 1, error
    return error


# -- the CI slice ---------------------------------------------------------------------------
def test_a_slice_of_the_campaign_has_no_failures():
    lines = []
    summary = run_parser_campaign(2500, seed=14, jobs=2, log=lines.append)
    assert summary["failures"] == [], parser_campaign.format_summary(summary)
    outcomes = summary["outcomes"]
    assert sum(outcomes.values()) == 2500
    assert outcomes["failure"] == 0
    assert min(outcomes["ok"], outcomes["parse_error"], outcomes["verifier_error"]) > 0
    assert summary["slowest"]["seconds"] <= parser_campaign.TIME_LIMIT
    assert set(summary["kinds"]) == set(KINDS)
    assert lines and "2500/2500" in lines[-1]


# -- the mutations --------------------------------------------------------------------------
@functools.cache
def sample() -> tuple:
    return tuple(mutate(3, i) for i in range(1500))


def test_every_kind_of_mutation_occurs_and_each_is_reproducible():
    mutations = sample()
    assert {m.kind for m in mutations} == set(KINDS)
    assert mutate(3, 123) == mutations[123]
    assert mutate(4, 123).data != mutations[123].data or mutate(4, 123).kind != \
        mutations[123].kind
    sources = {text.name for text in corpus()}
    assert all(m.source in sources and m.note for m in mutations)
    assert any("; then " in m.note for m in mutations)  # stacked edits


def test_byte_mutations_give_bytes_and_invalid_utf8_is_invalid():
    mutations = [m for m in sample() if m.kind in ("invalid_utf8", "byte_flip")]
    assert mutations and all(isinstance(m.data, bytes) for m in mutations)
    invalid = [m for m in mutations if m.kind == "invalid_utf8"]
    undecodable = 0
    for m in invalid:
        try:
            m.data.decode("utf-8")
        except UnicodeDecodeError:
            undecodable += 1
    assert undecodable >= 0.9 * len(invalid)


@pytest.mark.parametrize("word", ["tuple_shape", "literal_braces", "rank",
                                  "attribute_brackets", "instruction_chain", "call_chain",
                                  "tuple_constant"])
def test_every_deep_nesting_variant_occurs(word):
    notes = [m.note for m in sample() if m.kind == "deep_nesting"]
    assert any(note.startswith(word) for note in notes)


def test_huge_shapes_and_numbers_reach_past_every_limit():
    notes = [m.note for m in sample() if m.kind in ("huge_shape", "huge_number")]
    assert any("constant({...})" in note for note in notes)
    assert any("(5001 chars)" in note for note in notes)


# -- the campaign's classification ------------------------------------------------------------
def test_check_text_classifies_outcomes():
    assert check_text(module("ROOT c = f32[] constant(1)"))[0] == "ok"
    assert check_text("HloModule")[0] == "parse_error"
    outcome, problem, error = check_text(module("p = f32[2] parameter(0)",
                                                "ROOT a = f32[3] add(p, p)"))
    assert (outcome, problem) == ("verifier_error", "") and "line 5, column 8" in error


def test_check_text_fails_other_exceptions_and_errors_without_a_position(monkeypatch):
    def raises(error):
        def fake(text):
            raise error
        return fake

    monkeypatch.setattr(parser_campaign, "parse", raises(KeyError("x")))
    assert check_text("x")[:2] == ("failure", "exception")
    monkeypatch.setattr(parser_campaign, "parse", raises(ParseError("no position")))
    assert check_text("x")[:2] == ("failure", "no position")
    wrapped = ParseError("wrapped", 1, 1)
    wrapped.__cause__ = ShapeError("inner")
    wrapped.__cause__.__cause__ = TypeError("bug")
    monkeypatch.setattr(parser_campaign, "parse", raises(wrapped))
    assert check_text("x")[:2] == ("parse_error", "masked TypeError")


class _FakeSandbox:
    """Crashes on any batch holding index 1; runs the rest in process."""

    restarts = 0

    def run(self, fn, seed, start, stop, timeout):
        from xlapy.fuzz.sandbox import Outcome

        if start <= 1 < stop:
            return Outcome("crash", error="worker killed by SIGSEGV")
        return Outcome("ok", value=fn(seed, start, stop, 1 << 40))


def test_a_crashing_batch_is_rerun_one_mutation_at_a_time():
    campaign = parser_campaign._Campaign(3, 0, log=lambda line: None)
    rows = campaign._run(_FakeSandbox(), 0, 3)
    assert [row[0] for row in rows] == [0, 1, 2]
    assert rows[1][2:4] == ("failure", "crash")
    assert rows[0][2] != "failure" and rows[2][2] != "failure"


def test_main_runs_a_campaign_and_writes_its_summary(tmp_path, capsys):
    path = tmp_path / "summary.json"
    assert parser_campaign.main(["--count", "30", "--seed", "1", "--jobs", "1",
                                 "--json", str(path)]) == 0
    assert "30 mutations" in capsys.readouterr().out
    summary = json.loads(path.read_text())
    assert summary["count"] == 30 and sum(summary["outcomes"].values()) == 30


def test_main_shows_one_mutation(capfdbinary):
    assert parser_campaign.main(["--seed", "0", "--show", "4"]) == 0
    out, err = capfdbinary.readouterr()
    mutation = mutate(0, 4)
    assert out == mutation.data.encode() and mutation.kind.encode() in err


# -- regressions: one per bug the campaign found ---------------------------------------------
def test_bytes_that_are_not_utf8_are_a_parse_error_at_their_position():
    # was: TypeError (parse took only str); a file read as bytes now parses
    error = parse_error(b"HloModule m\n\nENTRY e {\n  ROOT c = f32[] constant(1)\xff\n}\n")
    assert (error.line, error.column) == (4, 29)
    assert "invalid UTF-8: byte 0xff" in str(error)
    error = parse_error("HloModule m\n  éé".encode() + b"\xc3(")  # a lead byte, no follower
    assert (error.line, error.column) == (2, 5)
    assert parse(module("ROOT c = f32[] constant(1)").encode()).name == "m"


def test_huge_elided_constants_are_refused_before_allocating():
    # was: MemoryError, or seconds per GiB (f32[100000,100000,100] constant({...}))
    for shape in ("f32[100000,100000,100]", "pred[1000000000000]", "s4[9223372036854775807]",
                  "f32[3037000500,303700050]"):
        error = parse_error(module(f"ROOT c = {shape} constant({{...}})"))
        assert "elided constant" in str(error)
    too_big = MAX_ELIDED_BYTES // 4 + 1
    assert "elided constant" in str(parse_error(module(f"ROOT c = f32[{too_big}] "
                                                       "constant({...})")))
    small = parse(module("ROOT c = s32[3,5] constant({...})")).entry_computation
    assert small.root_instruction.literal.ravel().tolist() == list(range(15))


def test_a_dense_constant_longer_than_the_text_is_refused_before_allocating():
    # was: MemoryError building the expected layout of 2^63 values
    error = parse_error(module("ROOT c = s8[9223372036854775807] constant({1})"))
    assert "needs 9223372036854775807 values or braces" in str(error)
    error = parse_error(module("ROOT c = f32[9223372036854775807] constant({1})"))
    assert "too big for an array" in str(error)
    error = parse_error(module("ROOT c = u8[4294967296,4294967296] constant({1, 2})"))
    assert (error.line, error.column) == (4, 47)


def test_a_zero_dimension_beside_a_huge_one_is_not_spelled_out():
    # was: MemoryError building the expected layout of f32[0,99999999999]'s 10^11 rows
    empty = parse(module("ROOT c = f32[0,99999999999] constant({})"))
    assert empty.entry_computation.root_instruction.literal.shape == (0, 99999999999)
    error = parse_error(module("ROOT c = f32[99999999999,0] constant({ {} })"))
    assert "needs 99999999999 values or braces" in str(error)
    # was: ValueError "array is too big" (NumPy counts the nonzero dimensions)
    error = parse_error(module("ROOT c = f32[0,9223372036854775807] constant({})"))
    assert "too big for an array" in str(error)


def test_a_lone_surrogate_inside_a_constant_is_a_parse_error():
    # was: UnicodeEncodeError from the fast path for dense constants (str input only)
    error = parse_error(module("ROOT c = f32[2] constant({1, 2\ud800})"))
    assert "unexpected character '\\ud800'" in str(error) and error.column == 33


def test_constants_of_a_rank_numpy_cannot_hold_are_a_parse_error():
    # was: ValueError "maximum supported dimension for an ndarray is currently 64"
    rank = 65
    text = module(f"ROOT c = f32[{','.join(['1'] * rank)}] constant({'{' * rank}1{'}' * rank})")
    assert "constants of rank 65 are not supported" in str(parse_error(text))


@pytest.mark.parametrize("number", ["1" + "0" * 5000, "-" + "1" * 5000, "0" * 5000 + "1" + "0" * 20])
def test_integers_of_thousands_of_digits_are_a_parse_error(number):
    # was: ValueError "Exceeds the limit (4300 digits) for integer string conversion"
    error = parse_error(module(f"ROOT c = s32[] constant({number})"))
    assert "does not fit in 64 bits" in str(error)


def test_leading_zeros_still_read_as_the_number():
    text = module("ROOT c = s32[] constant(" + "0" * 5000 + "7)")
    assert int(parse(text).entry_computation.root_instruction.literal) == 7


@pytest.mark.parametrize("attribute", ["window={size=" + "9" * 5000 + "x1}",
                                       "padding=0_" + "9" * 5000])
def test_window_and_padding_numbers_of_thousands_of_digits_are_a_parse_error(attribute):
    # was: ValueError from int() of the DxD / padding pattern
    text = module("p = f32[4,4] parameter(0)", "z = f32[] constant(0)",
                  f"ROOT r = f32[4,4] pad(p, z), {attribute}")
    assert "does not fit in 64 bits" in str(parse_error(text))


def test_inferred_tuple_shapes_nested_past_the_limit_are_a_parse_error():
    # was: 2 s for 300 nested tuples, and a RecursionError deeper
    lines = ["t0 = f32[] constant(1)"] + [f"t{i} = tuple(t{i - 1})" for i in range(1, 300)]
    error = parse_error(module(*lines))
    assert "nests tuples more than 64 deep" in str(error) and error.line == 69


def test_tuples_of_one_operand_twice_do_not_grow_exponentially():
    # was: t_k = tuple(t_k-1, t_k-1) doubles the inferred shape: 40 steps never ended
    lines = ["t0 = f32[] constant(1)"] + [f"t{i} = tuple(t{i - 1}, t{i - 1})"
                                         for i in range(1, 40)]
    started = time.perf_counter()
    error = parse_error(module(*lines))
    assert "more than 8192 subshapes" in str(error) and error.line == 17
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("groups, problem", [
    ("[65536,65536]<=[4294967296]", "name 4294967296 device ids"),  # was: a 32 GiB arange
    ("[2,2]<=[5]", "2x2 ids do not match the 5 ids"),  # was: a masked ValueError
    ("[2,2]<=[2,2]T(0,0)", "is not a permutation"),
    ("[2,-2]<=[4]", "negative dimension"),
])
def test_iota_replica_groups_are_checked_before_they_are_expanded(groups, problem):
    text = ("HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT c = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
            f"  ROOT r = f32[4] all-reduce(p), replica_groups={groups}, to_apply=add\n}}\n")
    assert problem in str(parse_error(text))


def test_metadata_the_parser_keeps_raw_verifies():
    # was: VerifierError "attribute metadata must be an OpMetadata, got RawAttribute"
    text = module('ROOT c = f32[] constant(1), metadata={op_name="c" source_line=3.4e38}')
    parsed = parse(text)
    assert isinstance(parsed.entry_computation.root_instruction.attrs["metadata"], RawAttribute)
    verify(parsed)


def test_verifier_errors_on_parsed_text_name_the_instruction_line_and_column():
    # was: a VerifierError without a position
    text = module("p = f32[2] parameter(0)", "ROOT a = f32[3] add(p, p)")
    with pytest.raises(VerifierError) as info:
        verify(parse(text))
    assert (info.value.line, info.value.column) == (5, 8)
    assert str(info.value).startswith("line 5, column 8: in computation e, instruction a")


def test_verifier_errors_about_the_module_name_its_header():
    text = module("ROOT p = f32[2] parameter(0)", header=", entry_computation_layout={(f32[3])->f32[3]}")
    with pytest.raises(VerifierError) as info:
        verify(parse(text))
    assert (info.value.line, info.value.column) == (1, 1)
    assert "entry_computation_layout" in str(info.value)


def test_shapes_whose_size_overflows_int64_fail_verification_as_in_xla():
    text = module("ROOT p = f32[4611686018427387904,4] parameter(0)")
    with pytest.raises(VerifierError, match="may overflow int64") as info:
        verify(parse(text))
    assert (info.value.line, info.value.column) == (4, 8)
    verify(parse(module("ROOT p = f32[0,9223372036854775807] parameter(0)")))


def test_a_recursion_error_while_parsing_is_a_parse_error_with_a_position(monkeypatch):
    from xlapy.hlo import parser

    def too_deep(self):
        raise RecursionError

    monkeypatch.setattr(parser._ModuleParser, "_computation", too_deep)
    error = parse_error(module("ROOT c = f32[] constant(1)"))
    assert "nested too deeply" in str(error) and error.line == 3
