"""Tests of the HLO text lexer: token kinds and values as XLA's lexer makes them,
C escapes, positions, and the token stream's error messages."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xlapy.errors import ParseError
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.lexer import (
    Lexer,
    NanValue,
    Tok,
    TokenStream,
    escape_c_string,
    unescape_c_string,
)


def tokens(text: str) -> list[tuple[Tok, object]]:
    lexer = Lexer(text)
    out = []
    pos = 0
    while True:
        token = lexer.lex(pos)
        if token.kind is Tok.EOF:
            return out
        out.append((token.kind, token.value))
        pos = token.end


@pytest.mark.parametrize("text, expected", [
    ("%add.3", [(Tok.NAME, "add.3")]),
    ("%get-tuple-element.5", [(Tok.NAME, "get-tuple-element.5")]),
    ("p0: f32[]", [(Tok.NAME, "p0"), (Tok.PRIMITIVE_TYPE, PrimitiveType.F32),
                   (Tok.LSQUARE, "["), (Tok.RSQUARE, "]")]),
    ("dimensions={1,0}", [(Tok.ATTRIBUTE_NAME, "dimensions"), (Tok.LBRACE, "{"), (Tok.INT, 1),
                          (Tok.COMMA, ","), (Tok.INT, 0), (Tok.RBRACE, "}")]),
    ("control-predecessors={%a}", [(Tok.ATTRIBUTE_NAME, "control-predecessors"),
                                   (Tok.LBRACE, "{"), (Tok.NAME, "a"), (Tok.RBRACE, "}")]),
    ("get-tuple-element region_0.6", [(Tok.IDENT, "get-tuple-element"),
                                      (Tok.IDENT, "region_0.6")]),
    ("tuple token bf16 f8e4m3fn", [(Tok.IDENT, "tuple"),
                                   (Tok.PRIMITIVE_TYPE, PrimitiveType.TOKEN),
                                   (Tok.PRIMITIVE_TYPE, PrimitiveType.BF16),
                                   (Tok.PRIMITIVE_TYPE, PrimitiveType.F8E4M3FN)]),
    ("HloModule ENTRY ROOT true false inf", [(Tok.KEYWORD, w) for w in
                                             "HloModule ENTRY ROOT true false inf".split()]),
    ("-> <= ... ? * # + ~", [(Tok.ARROW, "->"), (Tok.LEQ, "<="), (Tok.DOTS, "..."),
                             (Tok.QUESTION, "?"), (Tok.ASTERISK, "*"), (Tok.OCTOTHORP, "#"),
                             (Tok.PLUS, "+"), (Tok.TILDE, "~")]),
    ("3x3 1x2x3", [(Tok.DXD, "3x3"), (Tok.DXD, "1x2x3")]),
    ("0_0x1_-1_2 -1_2 5_5", [(Tok.PAD, "0_0x1_-1_2"), (Tok.PAD, "-1_2"), (Tok.PAD, "5_5")]),
    ("b01f_01io->b01f 01bf_io01->bf01", [(Tok.DIM_LABELS, "b01f_01io->b01f"),
                                         (Tok.DIM_LABELS, "01bf_io01->bf01")]),
    ("bf_io->bf", [(Tok.DIM_LABELS, "bf_io->bf")]),
    ("42 -7 18446744073709551615", [(Tok.INT, 42), (Tok.INT, -7),
                                    (Tok.INT, 18446744073709551615)]),
    ("1.5 1e-05 -.5 2. -3.25E+2", [(Tok.DECIMAL, 1.5), (Tok.DECIMAL, 1e-05), (Tok.DECIMAL, -0.5),
                                  (Tok.DECIMAL, 2.0), (Tok.DECIMAL, -325.0)]),
    ("-inf", [(Tok.NEG_INF, -math.inf)]),
    ("nan -nan nan(0x7) -nan(0x1f)", [(Tok.DECIMAL, NanValue(False)),
                                      (Tok.DECIMAL, NanValue(True)),
                                      (Tok.DECIMAL, NanValue(False, 7)),
                                      (Tok.DECIMAL, NanValue(True, 31))]),
    ('"a\\"b" \'it\\\'s\'', [(Tok.STRING, 'a"b'), (Tok.STRING, "it's")]),
    ("a /* skip {this} */ b // and this\n c", [(Tok.IDENT, "a"), (Tok.IDENT, "b"),
                                               (Tok.IDENT, "c")]),
    ("f32[2]{1,0:T(8,128)}", [(Tok.PRIMITIVE_TYPE, PrimitiveType.F32), (Tok.LSQUARE, "["),
                              (Tok.INT, 2), (Tok.RSQUARE, "]"), (Tok.LBRACE, "{"),
                              (Tok.INT, 1), (Tok.COMMA, ","), (Tok.INT, 0), (Tok.COLON, ":"),
                              (Tok.IDENT, "T"), (Tok.LPAREN, "("), (Tok.INT, 8),
                              (Tok.COMMA, ","), (Tok.INT, 128), (Tok.RPAREN, ")"),
                              (Tok.RBRACE, "}")]),
])
def test_token_kinds_and_values(text, expected):
    assert tokens(text) == expected


@pytest.mark.parametrize("text, message", [
    ("@", "unexpected character '@'"),
    ('"abc', "unterminated string"),
    ("/* never closed", "unterminated comment"),
    ("%1x", "expected a name after '%'"),
    ("99999999999999999999", "does not fit in 64 bits"),
    ("-x", "expected a number after '-'"),
    ("nan(12)", "expected a NaN payload"),
    ("nan(0x0)", "NaN payload 0x0 is out of range"),
    ('"bad \\q escape"', "invalid escape sequence \\q"),
    ("<", "unexpected character '<'"),
])
def test_error_tokens(text, message):
    token = Lexer(text).lex(0)
    assert token.kind is Tok.ERROR
    assert message in token.value


def test_location_is_one_based_line_and_column():
    lexer = Lexer("ab\n  cd\nef")
    assert lexer.location(0) == (1, 1, "ab")
    assert lexer.location(5) == (2, 3, "  cd")
    assert lexer.location(8) == (3, 1, "ef")


def test_stream_expect_says_what_was_expected_and_found():
    stream = TokenStream("(a, b\n  , c")
    stream.expect(Tok.LPAREN)
    stream.expect(Tok.IDENT)
    with pytest.raises(ParseError) as info:
        stream.expect(Tok.RPAREN)
    error = info.value
    assert error.message == "expected ')' but found ','"
    assert (error.line, error.column, error.source_line) == (1, 3, "(a, b")


def test_stream_reports_lexer_errors_where_they_are():
    stream = TokenStream("x\n   @")
    stream.advance()
    with pytest.raises(ParseError) as info:
        stream.expect(Tok.COMMA)
    assert info.value.message == "unexpected character '@'"
    assert (info.value.line, info.value.column) == (2, 4)
    assert str(info.value).endswith("   @\n     ^")


def test_peek_and_last_end():
    stream = TokenStream("a b")
    assert stream.peek().value == "b"
    assert stream.tok.value == "a"
    stream.advance()
    assert stream.last_end == 1
    assert stream.tok.value == "b"


def test_balanced_end_skips_quoted_braces():
    text = '{"a": "}", "b": [1, {2}]} tail'
    assert Lexer(text).balanced_end(0) == text.index(" tail")
    assert Lexer("{it's, {x}} tail").balanced_end(0) == len("{it's, {x}}")
    with pytest.raises(ParseError, match="unclosed"):
        Lexer("{[1, 2]").balanced_end(0)
    with pytest.raises(ParseError, match="unterminated string"):
        Lexer('{"a}').balanced_end(0)
    with pytest.raises(ParseError, match="unbalanced"):
        Lexer("{[1, 2}").balanced_end(0)


@pytest.mark.parametrize("value, escaped", [
    ("plain", "plain"),
    ('say "hi"', 'say \\"hi\\"'),
    ("it's", "it\\'s"),
    ("a\\b", "a\\\\b"),
    ("line\nnext\ttab", "line\\nnext\\ttab"),
    ("caf\u00e9", "caf\\303\\251"),
    ("\x01", "\\001"),
])
def test_escape_matches_absl_cescape(value, escaped):
    assert escape_c_string(value) == escaped
    assert unescape_c_string(escaped) == value


def test_unescape_accepts_hex_and_unicode_escapes():
    assert unescape_c_string("\\x41\\u00e9\\U0001F600") == "A\u00e9\U0001F600"


@given(st.text())
def test_escape_round_trips_any_text(value):
    assert unescape_c_string(escape_c_string(value)) == value


@given(st.binary())
def test_escape_round_trips_bytes_that_are_not_utf8(data):
    value = data.decode("utf-8", "surrogateescape")
    assert unescape_c_string(escape_c_string(value)) == value
