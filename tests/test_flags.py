"""XLAPY_FLAGS: XLA's flag names parsed once, unknown flags and bad values named."""

import pytest

from xlapy import flags
from xlapy.flags import DebugOptions, FlagError, debug_options, parse_flags, register_flag


def test_defaults_are_xlas():
    options = parse_flags("")
    assert options.xla_dump_to == ""
    assert options.xla_dump_hlo_as_text is False
    assert options.xla_dump_hlo_as_long_text is True
    assert options.xla_disable_hlo_passes == ()
    assert options.xla_disable_all_hlo_passes is False
    assert options.xlapy_verify_hlo_passes is False
    assert options.non_default() == {}


def test_values_of_every_kind():
    options = parse_flags("--xla_dump_to=/tmp/d --xla_dump_hlo_as_dot "
                          "--xla_dump_hlo_as_long_text=false --xla_dump_hlo_pass_re=fusion|dce "
                          "--xla_disable_hlo_passes=cse,constant_folding")
    assert options.xla_dump_to == "/tmp/d"
    assert options.xla_dump_hlo_as_dot is True
    assert options.xla_dump_hlo_as_long_text is False
    assert options.xla_dump_hlo_pass_re == "fusion|dce"
    assert options.xla_disable_hlo_passes == ("cse", "constant_folding")


@pytest.mark.parametrize("text, value", [("true", True), ("1", True), ("false", False),
                                         ("0", False), ("TRUE", True)])
def test_bool_spellings(text, value):
    assert parse_flags(f"--xla_dump_hlo_as_html={text}").xla_dump_hlo_as_html is value


def test_quoted_values_and_single_dash():
    options = parse_flags("'--xla_dump_to=/tmp/a b' -xla_dump_hlo_as_text")
    assert options.xla_dump_to == "/tmp/a b"
    assert options.xla_dump_hlo_as_text is True


def test_unknown_flag_is_named_with_a_suggestion():
    with pytest.raises(FlagError, match=r"unknown flag --xla_dump_hlo_as_txt .*"
                                        r"did you mean --xla_dump_hlo_as_text\?"):
        parse_flags("--xla_dump_to=/tmp --xla_dump_hlo_as_txt")


def test_unknown_flag_without_a_near_name():
    with pytest.raises(FlagError, match="unknown flag --frobnicate in XLAPY_FLAGS$"):
        parse_flags("--frobnicate=3")


@pytest.mark.parametrize("text, message", [
    ("--xla_dump_hlo_as_text=maybe", r"--xla_dump_hlo_as_text expects true or false, got 'maybe'"),
    ("--xla_dump_hlo_pass_re=(", r"--xla_dump_hlo_pass_re: '\(' is not a valid regular expression"),
    ("--xla_dump_to", r"--xla_dump_to needs a value"),
    ("xla_dump_to=/tmp", r"'xla_dump_to=/tmp' is not a flag"),
    ("--xla_dump_to='/tmp", r"cannot be split into flags"),
])
def test_bad_values_name_the_flag(text, message):
    with pytest.raises(FlagError, match=message):
        parse_flags(text)


def test_flag_error_is_a_value_error_for_the_cli():
    with pytest.raises(ValueError):
        parse_flags("--nope")


def test_environment_is_parsed_once_per_value(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_dump_hlo_as_dot")
    first = debug_options()
    assert first.xla_dump_hlo_as_dot is True
    assert debug_options() is first  # cached
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_dump_hlo_as_html")
    second = debug_options()
    assert second.xla_dump_hlo_as_html is True and second.xla_dump_hlo_as_dot is False
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_dump_hlo_as_htlm")
    with pytest.raises(FlagError, match="xla_dump_hlo_as_htlm"):
        debug_options()


def test_backend_flags_can_be_registered(monkeypatch):
    monkeypatch.setattr(flags, "_FLAGS", dict(flags._FLAGS))
    register_flag("xla_cpu_test_only_width", "int", 256, "a backend's flag")
    assert parse_flags("--xla_cpu_test_only_width=512").xla_cpu_test_only_width == 512
    assert parse_flags("").xla_cpu_test_only_width == 256
    with pytest.raises(FlagError, match="expects an integer"):
        parse_flags("--xla_cpu_test_only_width=wide")
    register_flag("xla_cpu_test_only_width", "int", 256, "declared again, same meaning")
    with pytest.raises(ValueError, match="already declared"):
        register_flag("xla_cpu_test_only_width", "bool", False, "a different meaning")
    with pytest.raises(ValueError, match="kind"):
        register_flag("xla_cpu_other", "float", 0.5, "no such kind")


def test_options_are_immutable_and_replaceable():
    options = parse_flags("--xla_dump_to=/tmp/x")
    with pytest.raises(AttributeError):
        options.xla_dump_to = "/elsewhere"
    changed = options.replace(xla_dump_hlo_as_dot=True)
    assert changed.xla_dump_hlo_as_dot and changed.xla_dump_to == "/tmp/x"
    assert not options.xla_dump_hlo_as_dot
    with pytest.raises(FlagError, match="unknown flag --xla_nope"):
        options.replace(xla_nope=1)
    with pytest.raises(AttributeError):
        options.no_such_flag  # noqa: B018


def test_to_text_round_trips():
    options = parse_flags("--xla_dump_to='/tmp/with space' --xla_dump_hlo_as_long_text=false "
                          "--xla_disable_hlo_passes=cse,dce --xla_dump_hlo_pass_re=.*")
    assert parse_flags(options.to_text()) == options
    assert DebugOptions() == parse_flags("")
