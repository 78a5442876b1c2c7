"""Slice, concatenate, pad, reverse and dynamic-slice rules of the algebraic
simplifier: HLO text in, HLO text out, same interpreter results."""

import numpy as np
import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo

CASES = [
    ("slice_noop", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] slice(p), slice={[0:2], [0:3]}""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("slice_slice", """
  p = f32[10,8] parameter(0)
  a = f32[8,4] slice(p), slice={[1:9], [0:8:2]}
  ROOT r = f32[3,2] slice(a), slice={[2:8:2], [1:3]}""", """
  p = f32[10,8] parameter(0)
  ROOT r = f32[3,2] slice(p), slice={[3:8:2], [2:5:2]}"""),
    ("slice_concatenate", """
  p = f32[2,3] parameter(0)
  q = f32[4,3] parameter(1)
  c = f32[6,3] concatenate(p, q), dimensions={0}
  ROOT r = f32[2,2] slice(c), slice={[3:5], [1:3]}""", """
  p = f32[2,3] parameter(0)
  q = f32[4,3] parameter(1)
  ROOT r = f32[2,2] slice(q), slice={[1:3], [1:3]}"""),
    ("slice_concatenate_whole_operand", """
  p = s32[2,3] parameter(0)
  q = s32[2,4] parameter(1)
  c = s32[2,7] concatenate(p, q), dimensions={1}
  ROOT r = s32[2,4] slice(c), slice={[0:2], [3:7]}""", """
  p = s32[2,3] parameter(0)
  ROOT q = s32[2,4] parameter(1)"""),
    ("slice_broadcast", """
  p = f32[5] parameter(0)
  b = f32[4,5] broadcast(p), dimensions={1}
  ROOT r = f32[2,3] slice(b), slice={[1:3], [2:5]}""", """
  p = f32[5] parameter(0)
  s = f32[3] slice(p), slice={[2:5]}
  ROOT r = f32[2,3] broadcast(s), dimensions={1}"""),
    ("slice_broadcast_new_dims_only", """
  p = f32[5] parameter(0)
  b = f32[4,5] broadcast(p), dimensions={1}
  ROOT r = f32[2,5] slice(b), slice={[0:4:2], [0:5]}""", """
  p = f32[5] parameter(0)
  ROOT r = f32[2,5] broadcast(p), dimensions={1}"""),
    ("concatenate_single", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] concatenate(p), dimensions={1}""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("concatenate_empty", """
  p = f32[2,3] parameter(0)
  e = f32[2,0] parameter(1)
  q = f32[2,1] parameter(2)
  ROOT r = f32[2,4] concatenate(p, e, q), dimensions={1}""", """
  p = f32[2,3] parameter(0)
  e = f32[2,0] parameter(1)
  q = f32[2,1] parameter(2)
  ROOT r = f32[2,4] concatenate(p, q), dimensions={1}"""),
    ("concatenate_flatten", """
  p = f32[1,3] parameter(0)
  q = f32[2,3] parameter(1)
  s = f32[4,3] parameter(2)
  c = f32[6,3] concatenate(q, s), dimensions={0}
  ROOT r = f32[7,3] concatenate(p, c), dimensions={0}""", """
  p = f32[1,3] parameter(0)
  q = f32[2,3] parameter(1)
  s = f32[4,3] parameter(2)
  ROOT r = f32[7,3] concatenate(p, q, s), dimensions={0}"""),
    ("concatenate_slices", """
  p = f32[4,10] parameter(0)
  a = f32[2,3] slice(p), slice={[1:3], [2:5]}
  b = f32[2,4] slice(p), slice={[1:3], [5:9]}
  ROOT r = f32[2,7] concatenate(a, b), dimensions={1}""", """
  p = f32[4,10] parameter(0)
  ROOT r = f32[2,7] slice(p), slice={[1:3], [2:9]}"""),
    ("concatenate_slices_partial", """
  p = s32[10] parameter(0)
  q = s32[2] parameter(1)
  a = s32[3] slice(p), slice={[0:3]}
  b = s32[2] slice(p), slice={[3:5]}
  c = s32[1] slice(p), slice={[7:8]}
  ROOT r = s32[8] concatenate(a, b, q, c), dimensions={0}""", """
  p = s32[10] parameter(0)
  q = s32[2] parameter(1)
  ab = s32[5] slice(p), slice={[0:5]}
  c = s32[1] slice(p), slice={[7:8]}
  ROOT r = s32[8] concatenate(ab, q, c), dimensions={0}"""),
    ("pad_noop", """
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] pad(p, z), padding=0_0x0_0""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("pad_empty_operand", """
  p = f32[0,3] parameter(0)
  v = f32[] parameter(1)
  ROOT r = f32[2,5] pad(p, v), padding=1_1x1_1""", """
  p = f32[0,3] parameter(0)
  v = f32[] parameter(1)
  ROOT r = f32[2,5] broadcast(v), dimensions={}"""),
    ("pad_pad", """
  p = f32[2,3] parameter(0)
  v = f32[] parameter(1)
  a = f32[5,3] pad(p, v), padding=1_0_2x0_0
  ROOT r = f32[6,5] pad(a, v), padding=0_1x2_0""", """
  p = f32[2,3] parameter(0)
  v = f32[] parameter(1)
  ROOT r = f32[6,5] pad(p, v), padding=1_1_2x2_0_0"""),
    ("reverse_noop", """
  p = f32[1,3] parameter(0)
  ROOT r = f32[1,3] reverse(p), dimensions={0}""", """
  ROOT p = f32[1,3] parameter(0)"""),
    ("reverse_reverse", """
  p = f32[2,3] parameter(0)
  a = f32[2,3] reverse(p), dimensions={0,1}
  ROOT r = f32[2,3] reverse(a), dimensions={1,0}""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("reverse_reverse_partial", """
  p = f32[2,3,4] parameter(0)
  a = f32[2,3,4] reverse(p), dimensions={0,1}
  ROOT r = f32[2,3,4] reverse(a), dimensions={1,2}""", """
  p = f32[2,3,4] parameter(0)
  ROOT r = f32[2,3,4] reverse(p), dimensions={0,2}"""),
    ("dynamic_slice_full", """
  p = f32[2,3] parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[2,3] dynamic-slice(p, i, i), dynamic_slice_sizes={2,3}""", """
  ROOT p = f32[2,3] parameter(0)
  i = s32[] parameter(1)"""),
    ("dynamic_slice_constant", """
  p = f32[5,6] parameter(0)
  i = s32[] constant(1)
  j = s32[] constant(2)
  ROOT r = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}""", """
  p = f32[5,6] parameter(0)
  ROOT r = f32[2,3] slice(p), slice={[1:3], [2:5]}"""),
    ("dynamic_slice_constant_clamped", """
  p = f32[5,6] parameter(0)
  i = s32[] constant(-7)
  j = s32[] constant(9)
  ROOT r = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}""", """
  p = f32[5,6] parameter(0)
  ROOT r = f32[2,3] slice(p), slice={[0:2], [3:6]}"""),
    ("dynamic_update_slice_full", """
  p = f32[2,3] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  ROOT r = f32[2,3] dynamic-update-slice(p, u, i, i)""", """
  p = f32[2,3] parameter(0)
  ROOT u = f32[2,3] parameter(1)
  i = s32[] parameter(2)"""),
    ("dynamic_update_slice_empty", """
  p = f32[2,3] parameter(0)
  u = f32[2,0] parameter(1)
  i = s32[] parameter(2)
  ROOT r = f32[2,3] dynamic-update-slice(p, u, i, i)""", """
  ROOT p = f32[2,3] parameter(0)
  u = f32[2,0] parameter(1)
  i = s32[] parameter(2)"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(hlo(before), hlo(after))


def test_dynamic_slice_clamping_matches_run_time():
    """Every start index, in and out of range, folds to the slice the interpreter reads."""
    for start in (-3, 0, 2, 3, 4, 100):
        before = hlo(f"""
  p = s32[6] parameter(0)
  i = s32[] constant({start})
  ROOT r = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={{3}}""")
        clamped = min(max(start, 0), 3)
        check(before, hlo(f"""
  p = s32[6] parameter(0)
  ROOT r = s32[3] slice(p), slice={{[{clamped}:{clamped + 3}]}}"""),
              inputs=[np.arange(6, dtype=np.int32)])


def test_unsigned_start_indices_clamp_from_above():
    check(hlo("""
  p = s32[6] parameter(0)
  i = u32[] constant(4294967295)
  ROOT r = s32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}"""), hlo("""
  p = s32[6] parameter(0)
  ROOT r = s32[2] slice(p), slice={[4:6]}"""), inputs=[np.arange(6, dtype=np.int32)])


@pytest.mark.parametrize("body", [
    # The slice straddles both operands of the concatenate.
    """
  p = f32[2,3] parameter(0)
  q = f32[4,3] parameter(1)
  c = f32[6,3] concatenate(p, q), dimensions={0}
  ROOT r = f32[2,3] slice(c), slice={[1:3], [0:3]}""",
    # Slices of one operand that leave a gap do not join.
    """
  p = f32[10] parameter(0)
  a = f32[2] slice(p), slice={[0:2]}
  b = f32[2] slice(p), slice={[3:5]}
  ROOT r = f32[4] concatenate(a, b), dimensions={0}""",
    # Pads with different padding values do not merge.
    """
  p = f32[2] parameter(0)
  v = f32[] constant(0)
  w = f32[] constant(-0)
  a = f32[3] pad(p, v), padding=1_0
  ROOT r = f32[4] pad(a, w), padding=1_0""",
    # Negative (cropping) padding inside does not merge.
    """
  p = f32[4] parameter(0)
  v = f32[] parameter(1)
  a = f32[3] pad(p, v), padding=-1_0
  ROOT r = f32[4] pad(a, v), padding=1_0""",
    # Indices that are not constants.
    """
  p = f32[5] parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}""",
], ids=["straddling_slice", "gap_between_slices", "other_pad_value", "negative_inner_pad",
        "dynamic_index"])
def test_rule_does_not_apply(body):
    check_unchanged(hlo(body))
