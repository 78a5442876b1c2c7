"""The algebraic simplifier as a pass: its tables, the driver (post order,
local fixed point, which computations it visits, what it keeps), and random
programs whose interpreter results must survive it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from tests.passes import (
    test_algsimp_arith,
    test_algsimp_dot,
    test_algsimp_logic,
    test_algsimp_pads,
    test_algsimp_reduce,
    test_algsimp_shapes,
    test_algsimp_slicing,
)
from tests.passes.algsimp_util import canonical, check, hlo, run_pass
from xlapy.hlo import parse, verify
from xlapy.hlo.attributes import OpMetadata
from xlapy.passes.algebraic_simplifier import RULES, AlgebraicSimplifier

FAMILY_TESTS = [
    (test_algsimp_arith, hlo), (test_algsimp_logic, hlo), (test_algsimp_shapes, hlo),
    (test_algsimp_slicing, hlo), (test_algsimp_dot, hlo), (test_algsimp_pads, hlo),
    (test_algsimp_reduce, test_algsimp_reduce.module),
]


# -- the tables ------------------------------------------------------------------------------
def test_there_are_at_least_forty_rules():
    rules = {rule for table in RULES.values() for rule in table}
    assert len(rules) >= 40


def test_every_rule_fires_in_a_before_after_test():
    """Run every family's before-text through a pass whose rules record that
    they fired: each rule of the tables must be exercised by some case."""
    fired = set()

    def recording(rule):
        def wrapped(instruction, rewriter):
            replacement = rule(instruction, rewriter)
            if replacement is not None:
                fired.add(rule)
            return replacement
        return wrapped

    table = {op: tuple(recording(r) for r in rules) for op, rules in RULES.items()}
    for family, wrap in FAMILY_TESTS:
        for _, before, _ in family.CASES:
            module = parse(wrap(before))
            AlgebraicSimplifier(table).run(module)
    missing = {r.__name__ for rules in RULES.values() for r in rules} - {r.__name__ for r in fired}
    assert not missing


# -- the driver -----------------------------------------------------------------------------
def test_an_instruction_is_simplified_to_a_local_fixed_point():
    check(hlo("""
  p = s32[2,3] parameter(0)
  a = s32[6] reshape(p)
  b = s32[3,2] reshape(a)
  c = s32[2,3] reshape(b)
  n = s32[2,3] negate(c)
  m = s32[2,3] negate(n)
  z = s32[] constant(0)
  zb = s32[2,3] broadcast(z), dimensions={}
  s = s32[2,3] subtract(m, zb)
  ROOT r = s32[2,3] multiply(s, s)"""), hlo("""
  p = s32[2,3] parameter(0)
  ROOT r = s32[2,3] multiply(p, p)"""))


def test_replacements_chain_through_new_instructions():
    """x - (-(-y)) -> x - y: the inner negates fold first (post order)."""
    check(hlo("""
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a = f32[4] negate(q)
  b = f32[4] negate(a)
  c = f32[4] negate(b)
  ROOT r = f32[4] subtract(p, c)"""), hlo("""
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] add(p, q)"""))


def test_nothing_to_do_reports_no_change():
    text = hlo("""
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] add(p, q)""")
    module = parse(text)
    assert AlgebraicSimplifier().run(module) is False
    assert module == parse(text)


def test_the_pass_is_deterministic():
    text = hlo("""
  p = f32[4,6] parameter(0)
  t = f32[6,4] transpose(p), dimensions={1,0}
  u = f32[4,6] transpose(t), dimensions={1,0}
  s = f32[2,6] slice(u), slice={[0:2], [0:6]}
  b = f32[2,6,5] broadcast(s), dimensions={0,1}
  z = f32[] constant(0)
  ROOT r = f32[2,6] reduce(b, z), dimensions={2}, to_apply=add
  """, extra="add {\n  a = f32[] parameter(0)\n  b0 = f32[] parameter(1)\n"
               "  ROOT s0 = f32[] add(a, b0)\n}")
    first, second = run_pass(text)[0], run_pass(text)[0]
    assert first.to_text() == second.to_text()


def test_name_and_interface():
    assert AlgebraicSimplifier.name == "algsimp"
    assert repr(AlgebraicSimplifier()) == "<AlgebraicSimplifier algsimp>"


def test_called_computations_are_simplified_but_fused_ones_are_not():
    text = """HloModule m
body {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT nn = f32[4] negate(n)
}
fused {
  f = f32[4] parameter(0)
  g = f32[4] negate(f)
  ROOT gg = f32[4] negate(g)
}
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] call(p), to_apply=body
  ROOT r = f32[4] fusion(c), kind=kLoop, calls=fused
}
"""
    module, changed = run_pass(text)
    assert changed
    assert module.computation("body").root_instruction.opcode.value == "parameter"
    assert module.computation("fused").root_instruction.name == "gg"
    x = np.arange(4, dtype=np.float32)
    assert np.array_equal(xlapy.execute(module, [x], backend="interpreter")[0], x)


def test_new_instructions_carry_the_metadata_of_what_they_replace():
    module = parse(hlo("""
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  n = f32[4] negate(q)
  ROOT r = f32[4] add(p, n), metadata={op_name="jit(f)/add" source_line=3}"""))
    AlgebraicSimplifier().run(module)
    verify(module)
    root = module.entry_computation.root_instruction
    assert root.opcode.value == "subtract"
    assert isinstance(root.attrs["metadata"], OpMetadata)
    assert root.attrs["metadata"].get("op_name") == "jit(f)/add"


def test_replaced_instructions_are_left_for_dce_and_the_ir_stays_valid():
    module, changed = run_pass(hlo("""
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  m = f32[4] negate(n)
  ROOT r = (f32[4], f32[4]) tuple(m, n)"""))
    assert changed
    names = [i.name for i in module.entry_computation.instructions]
    assert "m" in names  # dead now; DCE's job
    assert [op.name for op in module.entry_computation.root_instruction.operands] == ["p", "n"]


def test_a_rule_returning_a_wrong_shape_is_reported():
    from xlapy.hlo.opcode import Opcode

    def bad(instruction, rewriter):
        return instruction.operands[0].operands[0]

    module = parse(hlo("""
  p = f32[4] parameter(0)
  s = f32[2] slice(p), slice={[0:2]}
  ROOT r = f32[2] negate(s)"""))
    with pytest.raises(ValueError, match="bad replaced r"):
        AlgebraicSimplifier({Opcode.NEGATE: (bad,)}).run(module)


# -- random programs -------------------------------------------------------------------------
SHAPE = "[2,3]"


def _constant(t: str, value: str) -> list[str]:
    return [f"{{v}}c = {t}[] constant({value})",
            f"{{v}}k = {t}{SHAPE} broadcast({{v}}c), dimensions={{{{}}}}"]


@st.composite
def programs(draw):
    """Random [2,3] programs of one element type built from the patterns the
    rules look for (identities, inverse pairs, slices that rejoin, reduces of
    broadcasts, transposed dot operands...) mixed with plain arithmetic."""
    t = draw(st.sampled_from(["s32", "f32", "u8"]))
    integral = t != "f32"
    lines = [f"p0 = {t}{SHAPE} parameter(0)", f"p1 = {t}{SHAPE} parameter(1)"]
    values = ["p0", "p1"]
    for n in range(draw(st.integers(2, 10))):
        a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        kinds = list(_PATTERNS) + (["int_only"] if integral else [])
        kind = draw(st.sampled_from(sorted(kinds)))
        body = _PATTERNS[kind](draw, t, a, b) if kind != "int_only" else _int_only(draw, t, a, b)
        lines += [line.format(v=f"v{n}") for line in body]
        values.append(f"v{n}")
    lines.append(f"ROOT out = ({t}{SHAPE}, {t}{SHAPE}) tuple({values[-1]}, {values[-2]})")
    reducers = "".join(
        f"{op}_{ty} {{\n  {op}{ty}a = {ty}[] parameter(0)\n  {op}{ty}b = {ty}[] parameter(1)\n"
        f"  ROOT {op}{ty}r = {ty}[] {op}({op}{ty}a, {op}{ty}b)\n}}\n"
        for op in ("add", "maximum") for ty in ("s32", "f32", "u8"))
    return "HloModule random\n" + reducers + "ENTRY main {\n  " + "\n  ".join(lines) + "\n}\n"


def _identity(draw, t, a, b):
    op, value = draw(st.sampled_from([("add", "0"), ("subtract", "0"), ("multiply", "1"),
                                      ("divide", "1"), ("power", "1"), ("multiply", "-1"),
                                      ("divide", "4"), ("power", "2"), ("power", "0"),
                                      ("maximum", "-inf"), ("minimum", "inf")]))
    if t != "f32" and value in ("-inf", "inf"):
        value = "0"
    if t == "u8" and value == "-1":
        value = "255"
    return _constant(t, value) + [f"{{v}} = {t}{SHAPE} {op}({a}, {{v}}k)"]


def _self(draw, t, a, b):
    op = draw(st.sampled_from(["maximum", "minimum", "subtract", "add", "multiply"]))
    return [f"{{v}} = {t}{SHAPE} {op}({a}, {a})"]


def _negates(draw, t, a, b):
    op = draw(st.sampled_from(["add", "subtract", "multiply"]))
    if t == "u8":
        return [f"{{v}} = {t}{SHAPE} {op}({a}, {b})"]
    return [f"{{v}}n = {t}{SHAPE} negate({b})", f"{{v}}m = {t}{SHAPE} negate({a})",
            f"{{v}} = {t}{SHAPE} {op}({{v}}m, {{v}}n)"]


def _movement(draw, t, a, b):
    kind = draw(st.sampled_from(["reshape", "transpose", "reverse", "slices", "pad", "copy"]))
    if kind == "reshape":
        return [f"{{v}}r = {t}[6] reshape({a})", f"{{v}}s = {t}[3,2] reshape({{v}}r)",
                f"{{v}} = {t}{SHAPE} reshape({{v}}s)"]
    if kind == "transpose":
        return [f"{{v}}t = {t}[3,2] transpose({a}), dimensions={{{{1,0}}}}",
                f"{{v}} = {t}{SHAPE} transpose({{v}}t), dimensions={{{{1,0}}}}"]
    if kind == "reverse":
        return [f"{{v}}r = {t}{SHAPE} reverse({a}), dimensions={{{{0,1}}}}",
                f"{{v}} = {t}{SHAPE} reverse({{v}}r), dimensions={{{{1}}}}"]
    if kind == "slices":
        return [f"{{v}}a = {t}[2,1] slice({a}), slice={{{{[0:2], [0:1]}}}}",
                f"{{v}}b = {t}[2,2] slice({a}), slice={{{{[0:2], [1:3]}}}}",
                f"{{v}}c = {t}[2,1] slice({{v}}b), slice={{{{[0:2], [1:2]}}}}",
                f"{{v}}d = {t}[2,1] slice({{v}}b), slice={{{{[0:2], [0:1]}}}}",
                f"{{v}}e = {t}[2,2] concatenate({{v}}d, {{v}}c), dimensions={{{{1}}}}",
                f"{{v}} = {t}{SHAPE} concatenate({{v}}a, {{v}}e), dimensions={{{{1}}}}"]
    if kind == "pad":
        return [f"{{v}}z = {t}[] constant(0)",
                f"{{v}}p = {t}[3,5] pad({a}, {{v}}z), padding=1_0x0_2",
                f"{{v}}q = {t}[4,6] pad({{v}}p, {{v}}z), padding=0_1x1_0",
                "{v}i = s32[] constant(1)",
                f"{{v}} = {t}{SHAPE} dynamic-slice({{v}}q, {{v}}i, {{v}}i), "
                "dynamic_slice_sizes={{2,3}}"]
    return [f"{{v}}c = {t}{SHAPE} copy({a})", f"{{v}} = {t}{SHAPE} copy({{v}}c)"]


def _select(draw, t, a, b):
    kind = draw(st.sampled_from(["constant", "same", "not"]))
    if kind == "constant":
        p = draw(st.sampled_from(["true", "false"]))
        return [f"{{v}}c = pred[] constant({p})",
                f"{{v}}p = pred{SHAPE} broadcast({{v}}c), dimensions={{{{}}}}",
                f"{{v}} = {t}{SHAPE} select({{v}}p, {a}, {b})"]
    compare = f"{{v}}p = pred{SHAPE} compare({a}, {b}), direction=LT"
    if kind == "same":
        return [compare, f"{{v}} = {t}{SHAPE} select({{v}}p, {a}, {a})"]
    return [compare, f"{{v}}n = pred{SHAPE} not({{v}}p)",
            f"{{v}} = {t}{SHAPE} select({{v}}n, {a}, {b})"]


def _reduce(draw, t, a, b):
    op = draw(st.sampled_from(["add", "maximum"]))
    kind = draw(st.sampled_from(["broadcast", "twice", "transpose", "size1"]))
    init = "0" if op == "add" else ("-inf" if t == "f32" else "0")
    head = [f"{{v}}z = {t}[] constant({init})"]
    if kind == "broadcast":
        return head + [f"{{v}}b = {t}[2,4,3] broadcast({a}), dimensions={{{{0,2}}}}",
                       f"{{v}} = {t}{SHAPE} reduce({{v}}b, {{v}}z), dimensions={{{{1}}}}, "
                       f"to_apply={op}_{t}"]
    if kind == "twice":
        return head + [f"{{v}}b = {t}[2,2,3,2] broadcast({a}), dimensions={{{{0,2}}}}",
                       f"{{v}}r = {t}[2,3,2] reduce({{v}}b, {{v}}z), dimensions={{{{1}}}}, "
                       f"to_apply={op}_{t}",
                       f"{{v}} = {t}{SHAPE} reduce({{v}}r, {{v}}z), dimensions={{{{2}}}}, "
                       f"to_apply={op}_{t}"]
    if kind == "transpose":
        return head + [f"{{v}}b = {t}[2,3,3] broadcast({a}), dimensions={{{{0,1}}}}",
                       f"{{v}}s = {t}[2,3,3] add({{v}}b, {{v}}b)",
                       f"{{v}}t = {t}[3,2,3] transpose({{v}}s), dimensions={{{{2,0,1}}}}",
                       f"{{v}} = {t}{SHAPE} reduce({{v}}t, {{v}}z), dimensions={{{{0}}}}, "
                       f"to_apply={op}_{t}"]
    return head + [f"{{v}}r = {t}[2,1,3] reshape({a})",
                   f"{{v}} = {t}{SHAPE} reduce({{v}}r, {{v}}z), dimensions={{{{1}}}}, "
                   f"to_apply={op}_{t}"]


def _dot(draw, t, a, b):
    return [f"{{v}}t = {t}[3,2] transpose({a}), dimensions={{{{1,0}}}}",
            f"{{v}}d = {t}[3,3] dot({{v}}t, {b}), lhs_contracting_dims={{{{1}}}}, "
            "rhs_contracting_dims={{0}}",
            f"{{v}} = {t}{SHAPE} slice({{v}}d), slice={{{{[0:2], [0:3]}}}}"]


def _int_only(draw, t, a, b):
    op = draw(st.sampled_from(["and", "or", "xor", "not_not", "compare", "convert", "divide",
                               "remainder"]))
    if op == "not_not":
        return [f"{{v}}n = {t}{SHAPE} not({a})", f"{{v}} = {t}{SHAPE} not({{v}}n)"]
    if op == "compare":
        return [f"{{v}}p = pred{SHAPE} compare({a}, {a}), direction=LE",
                f"{{v}}z = {t}{SHAPE} subtract({a}, {b})",
                f"{{v}} = {t}{SHAPE} select({{v}}p, {{v}}z, {b})"]
    if op == "convert":
        return [f"{{v}}w = s64{SHAPE} convert({a})", f"{{v}} = {t}{SHAPE} convert({{v}}w)"]
    if op in ("divide", "remainder"):
        return _constant(t, "8") + [f"{{v}} = {t}{SHAPE} {op}({a}, {{v}}k)"]
    value = draw(st.sampled_from(["0", "-1" if t == "s32" else "255"]))
    return _constant(t, value) + [f"{{v}} = {t}{SHAPE} {op}({a}, {{v}}k)"]


def _plumbing(draw, t, a, b):
    kind = draw(st.sampled_from(["tuple", "broadcasts", "update", "outer"]))
    if kind == "tuple":
        return [f"{{v}}t = ({t}{SHAPE}, {t}{SHAPE}) tuple({a}, {b})",
                f"{{v}} = {t}{SHAPE} get-tuple-element({{v}}t), index=1"]
    if kind == "broadcasts":
        return [f"{{v}}s = {t}[2,1] slice({a}), slice={{{{[0:2], [1:2]}}}}",
                f"{{v}}r = {t}[2] reshape({{v}}s)",
                f"{{v}}b = {t}{SHAPE} broadcast({{v}}r), dimensions={{{{0}}}}",
                f"{{v}} = {t}{SHAPE} broadcast({{v}}b), dimensions={{{{0,1}}}}"]
    if kind == "update":
        return ["{v}i = s32[] constant(0)",
                f"{{v}} = {t}{SHAPE} dynamic-update-slice({a}, {b}, {{v}}i, {{v}}i)"]
    return [f"{{v}}x = {t}[1,3] slice({a}), slice={{{{[1:2], [0:3]}}}}",
            f"{{v}}y = {t}[3] reshape({{v}}x)",
            f"{{v}}u = {t}[2,1] slice({b}), slice={{{{[0:2], [2:3]}}}}",
            f"{{v}}w = {t}[2] reshape({{v}}u)",
            f"{{v}} = {t}{SHAPE} dot({{v}}w, {{v}}y), lhs_contracting_dims={{{{}}}}, "
            "rhs_contracting_dims={{}}"]


def _plain(draw, t, a, b):
    op = draw(st.sampled_from(["add", "multiply", "subtract", "maximum"]))
    return [f"{{v}} = {t}{SHAPE} {op}({a}, {b})"]


_PATTERNS = {"identity": _identity, "self": _self, "negates": _negates, "movement": _movement,
             "select": _select, "reduce": _reduce, "dot": _dot, "plumbing": _plumbing,
             "plain": _plain}


def _random_arguments(module, seed):
    rng = np.random.default_rng(seed)
    args = []
    for param in module.entry_computation.parameters:
        dtype = param.shape.dtype
        if dtype.kind == "f":
            args.append((rng.standard_normal(param.shape.dimensions) * 2).astype(dtype))
        else:
            args.append(rng.integers(0, 50, param.shape.dimensions).astype(dtype))
    return args


@given(programs(), st.integers(0, 3))
def test_random_programs_keep_their_results(text, seed):
    before = parse(text)
    verify(before)
    module, _ = run_pass(text)
    args = _random_arguments(before, seed)
    expected = xlapy.execute(before, args, backend="interpreter")
    actual = xlapy.execute(module, args, backend="interpreter")
    for e, a in zip(expected, actual):
        assert e.dtype == a.dtype and e.shape == a.shape
        if e.dtype.kind == "f":  # float sums may be reassociated, as XLA allows
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)
        else:
            assert np.array_equal(a, e)
    assert canonical(run_pass(text)[0]) == canonical(module)
