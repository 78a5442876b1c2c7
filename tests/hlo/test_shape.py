"""Shapes: construction, queries, compatibility and XLA's spelling."""

from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.shape import Layout, Shape


def test_array_shape_text_and_queries():
    s = Shape.array("f32", (2, 3))
    assert s.to_text() == "f32[2,3]" and s.rank == 2 and s.element_count == 6
    assert s.byte_size == 24 and s.dtype.name == "float32"
    assert s.with_default_layout().to_text() == "f32[2,3]{1,0}"
    assert Shape.array(P.F32, (2, 3), (0, 1)).to_text() == "f32[2,3]{0,1}"


def test_scalar_prints_no_layout():
    assert Shape.scalar("pred").with_default_layout().to_text() == "pred[]"


def test_tuple_and_token():
    t = Shape.tuple([Shape.array("f32", (2,), (0,)), Shape.scalar("s32")])
    assert t.to_text() == "(f32[2]{0}, s32[])" and t.is_tuple
    assert t.leaves() == [((0,), t.tuple_shapes[0]), ((1,), t.tuple_shapes[1])]
    assert t.subshape((1,)) == Shape.scalar("s32") and t.byte_size == 12
    assert Shape.token().to_text() == "token[]" and Shape.token().byte_size == 0


def test_compatible_ignores_layout_but_equality_does_not():
    a = Shape.array("f32", (4, 5), (1, 0))
    b = Shape.array("f32", (4, 5), (0, 1))
    assert a.compatible(b) and a != b
    assert not a.compatible(Shape.array("f16", (4, 5)))
    assert a.without_layout() == Shape.array("f32", (4, 5))


def test_layout_extras_and_dynamic_dims():
    layout = Layout((1, 0), "T(8,128)")
    assert str(layout) == "{1,0:T(8,128)}"
    s = Shape(P.F32, (2, 4), None, (), (False, True))
    assert s.to_text() == "f32[2,<=4]" and s.is_dynamic


def test_long_tuples_carry_index_markers():
    t = Shape.tuple([Shape.scalar("f32")] * 7)
    assert t.to_text() == "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[])"
