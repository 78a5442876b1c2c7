"""Malformed or unsupported StableHLO is a ParseError that names the line and
column and what was unexpected; no input raises anything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlapy import stablehlo
from xlapy.errors import ParseError

GOOD = """module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""


def _error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        stablehlo.parse(text)
    return info.value


def _line3(op: str) -> str:
    return GOOD.replace("%0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>", op)


def test_the_good_module_parses():
    assert stablehlo.parse(GOOD).entry_computation.root_instruction.opcode.value == "add"


@pytest.mark.parametrize("op, where, words", [
    ("%0 = stablehlo.frobnicate %arg0 : tensor<2xf32>", (3, 5), ["frobnicate"]),
    ("%0 = stablehlo.add %arg0, %arg0 : tensor<2xq7>", (3, 46), ["element type", "q7"]),
    ("%0 = stablehlo.add %arg0, %arg0 : tensor<?xf32>", (3, 46), ["dynamic"]),
    ("%0 = stablehlo.add %arg0 : tensor<2xf32>", (3, 5), ["expected 2 operand"]),
    ("%0 = stablehlo.add %arg0, %nope : tensor<2xf32>", (3, 31), ["undefined", "%nope"]),
    ("%0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>", (3, 5), ["declared", "f32[3]"]),
    ("%0 = stablehlo.add %arg0, %arg0#2 : tensor<2xf32>", (3, 31), ["#2"]),
    ("%0 = stablehlo.add %arg0, %arg0", (4, 5), ["':'", "return"]),
    ("%0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>", (3, 34), ["shape [3]"]),
    ("%0 = stablehlo.add %arg0, %arg0 : tensor<2xf32> %1", (4, 5), ["result name"]),
    ('%0 = stablehlo.custom_call @x(%arg0) {backend_config = "} : tensor<2xf32>', (3, 60),
     ["unterminated string"]),
    ("%0 = stablehlo.add %arg0, %arg0 : tensor<2xf32> ` ", (3, 53), ["unexpected character"]),
])
def test_bad_op_names_line_and_column(op, where, words):
    error = _error(_line3(op))
    assert (error.line, error.column) == where, str(error)
    assert "line {}, column {}".format(*where) in str(error)
    for word in words:
        assert word in str(error)


def test_unterminated_region_names_its_opening_brace():
    text = GOOD.replace("    return %0 : tensor<2xf32>\n  }\n}\n", "    return %0 : tensor<2xf32>\n")
    error = _error(text)
    assert "unterminated region" in str(error)
    assert (error.line, error.column) == (2, 65)


def test_undefined_function_and_missing_return():
    call = _error(_line3("%0 = func.call @nowhere(%arg0) : (tensor<2xf32>) -> tensor<2xf32>"))
    assert "@nowhere" in str(call) and call.line == 3
    no_return = _error(GOOD.replace("    return %0 : tensor<2xf32>\n", ""))
    assert "return" in str(no_return) and no_return.line == 2


def test_reducer_may_not_capture_a_computed_value():
    text = """module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<f32> {
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.sine %c : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %1 = stablehlo.add %a, %s : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }
    return %0 : tensor<f32>
  }
}
"""
    error = _error(text)
    assert "%s" in str(error) and "captured" in str(error) and error.line == 7


@pytest.mark.parametrize("text, words", [
    ("", ["no func.func"]),
    ("HloModule m\n", ["expected"]),
    ("module @m {\n}\n", ["no func.func"]),
    (b"\xff\xfe", ["UTF-8"]),
    ('"builtin.module"() ({ }) : () -> ()', ["generic form"]),
    ("module @m {\n  func.func private @f(%a: tensor<f32>) -> tensor<f32> {\n"
     "    return %a : tensor<f32>\n  }\n  func.func private @g(%a: tensor<f32>) -> tensor<f32> {"
     "\n    return %a : tensor<f32>\n  }\n}\n", ["entry"]),
])
def test_bad_modules(text, words):
    error = _error(text)
    for word in words:
        assert word in str(error)


CORPUS = Path(__file__).parent / "corpus"
SAMPLES = [(CORPUS / f"{name}.mlir").read_text() for name in
           ("corpus_argmax_variadic_reduce", "corpus_fori_loop", "corpus_switch",
            "corpus_scatter_add", "corpus_maxpool_grad")]


@settings(max_examples=60)
@given(sample=st.sampled_from(SAMPLES), data=st.data())
def test_damaged_text_only_raises_parse_error(sample, data):
    """Cut, delete or replace a random stretch of a real module: the parser either reads
    it or raises ParseError, nothing else."""
    start = data.draw(st.integers(0, len(sample) - 1))
    length = data.draw(st.integers(0, 12))
    insert = data.draw(st.sampled_from(["", "}", "{", "%0", "(", ",", ":", "<", "x", "-1",
                                        "tensor<f32>", "dense<1>", "#", '"', "@f"]))
    damaged = sample[:start] + insert + sample[start + length:]
    try:
        stablehlo.parse(damaged)
    except ParseError as e:
        assert e.line >= 1 or "UTF-8" in str(e)
