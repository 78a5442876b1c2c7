"""Shape inference of data movement: broadcast, reshape, bitcast, iota,
transpose, reverse, slices, concatenate, pad, dimension sizes, gather and
scatter (with batching dimensions)."""

import re

import pytest

from tests.hlo.shape_inference_util import computation, infer, padding, reducer, slices
from xlapy.errors import ShapeError

EMBED = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
         "index_vector_dim": 1, "slice_sizes": (1, 4)}
# StableHLO spec's batching example: operand [2,3,4,2], indices [2,2,3,2].
BATCHED = {"offset_dims": (3, 4), "collapsed_slice_dims": (1,), "operand_batching_dims": (0,),
           "start_indices_batching_dims": (1,), "start_index_map": (2, 1), "index_vector_dim": 3,
           "slice_sizes": (1, 1, 2, 2)}
SCATTER = {"update_window_dims": (1,), "inserted_window_dims": (0,),
           "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1,
           "to_apply": reducer("f32")}
SCATTER_BATCHED = {"update_window_dims": (3, 4), "inserted_window_dims": (1,),
                   "input_batching_dims": (0,), "scatter_indices_batching_dims": (1,),
                   "scatter_dims_to_operand_dims": (2, 1), "index_vector_dim": 3,
                   "to_apply": reducer("s64")}

OK_CASES = [
    ("broadcast", ["f32[3]"], {"dimensions": (1,)}, "f32[2,3]", "f32[2,3]"),
    ("broadcast", ["f32[]"], {"dimensions": ()}, "f32[4,5]", "f32[4,5]"),
    ("broadcast", ["s32[2,3]"], {"dimensions": (2, 0)}, "s32[3,7,2]", "s32[3,7,2]"),
    ("reshape", ["f32[2,3]"], {}, "f32[6]", "f32[6]"),
    ("reshape", ["f32[1]"], {}, "f32[]", "f32[]"),
    ("dynamic-reshape", ["f32[6]", "s32[]", "s32[]"], {}, "f32[<=2,3]", "f32[<=2,3]"),
    ("bitcast", ["f32[2,3]"], {}, "s32[6]", "s32[6]"),
    ("bitcast", ["f32[2]"], {}, "u8[8]", "u8[8]"),
    ("iota", [], {"iota_dimension": 1}, "s32[4,5]", "s32[4,5]"),
    ("transpose", ["f32[2,3,4]"], {"dimensions": (2, 0, 1)}, None, "f32[4,2,3]"),
    ("transpose", ["f32[]"], {"dimensions": ()}, None, "f32[]"),
    ("reverse", ["f32[2,3]"], {"dimensions": (1, 0)}, None, "f32[2,3]"),
    ("slice", ["f32[10,5]"], {"slice": slices((2, 8, 3), (0, 5))}, None, "f32[2,5]"),
    ("slice", ["f32[10]"], {"slice": slices((4, 4))}, None, "f32[0]"),
    ("dynamic-slice", ["f32[10,5]", "s32[]", "s32[]"], {"dynamic_slice_sizes": (2, 5)}, None,
     "f32[2,5]"),
    ("dynamic-update-slice", ["f32[10,5]", "f32[2,5]", "u8[]", "u8[]"], {}, None, "f32[10,5]"),
    ("concatenate", ["f32[2,3]", "f32[4,3]", "f32[1,3]"], {"dimensions": (0,)}, None, "f32[7,3]"),
    ("concatenate", ["s8[2,3]"], {"dimensions": (1,)}, None, "s8[2,3]"),
    ("pad", ["f32[3,4]", "f32[]"], {"padding": padding("1_2x-1_0_1")}, None, "f32[6,6]"),
    ("pad", ["f32[0]", "f32[]"], {"padding": padding("1_1_5")}, None, "f32[2]"),
    ("pad", ["f32[5]", "f32[]"], {"padding": padding("-5_0")}, None, "f32[0]"),
    ("get-dimension-size", ["f32[3,4]"], {"dimensions": (1,)}, None, "s32[]"),
    ("set-dimension-size", ["f32[3,4]", "s32[]"], {"dimensions": (1,)}, None, "f32[3,<=4]"),
    ("gather", ["f32[10,4]", "s32[5,1]"], EMBED, None, "f32[5,4]"),
    ("gather", ["f32[10,4]", "s32[5]"], {**EMBED, "index_vector_dim": 1}, None, "f32[5,4]"),
    ("gather", ["s32[2,3,4,2]", "s64[2,2,3,2]"], BATCHED, None, "s32[2,2,3,2,2]"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "f32[5,4]"], SCATTER, None, "f32[10,4]"),
    ("scatter", ["s64[2,3,4,2]", "s64[2,2,3,2]", "s64[2,2,3,2,2]"], SCATTER_BATCHED, None,
     "s64[2,3,4,2]"),
    ("scatter", ["f32[10]", "s32[10]", "s32[3,1]", "f32[3]", "s32[3]"],
     {"update_window_dims": (), "inserted_window_dims": (0,),
      "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1,
      "to_apply": computation("r2", ["f32[]", "s32[]", "f32[]", "s32[]"], "(f32[], s32[])")},
     None, "(f32[10], s32[10])"),
]

ERROR_CASES = [
    ("broadcast", ["f32[3]"], {"dimensions": (2,)}, "f32[2,3]", "broadcast: dimensions={2} maps "
     "operand dim 0 to result dim 2 but the result has rank 2"),
    ("broadcast", ["f32[3]"], {"dimensions": (0,)}, "f32[2,3]", "operand dim 0 has size 3 but "
     "result dim 0 it maps to has size 2"),
    ("broadcast", ["f32[3]"], {"dimensions": ()}, "f32[3]", "dimensions={} has 0 entries but the "
     "operand f32[3] has rank 1"),
    ("broadcast", ["f32[3,3]"], {"dimensions": (1, 1)}, "f32[3,3]", "repeats a dimension"),
    ("broadcast", ["f32[3]"], {"dimensions": (0,)}, None, "the result dimensions of a broadcast "
     "are only the instruction's declared shape says so"),
    ("reshape", ["f32[2,3]"], {}, "f32[5]", "cannot reshape f32[2,3] (6 elements) to f32[5] "
     "(5 elements)"),
    ("dynamic-reshape", ["f32[6]", "s32[]"], {}, "f32[2,3]", "a rank-2 result needs 2 size "
     "operands, got 1"),
    ("dynamic-reshape", ["f32[6]", "s64[]"], {}, "f32[6]", "size operand 1 must be s32[]"),
    ("bitcast", ["f32[2,3]"], {}, "f32[5]", "cannot bitcast f32[2,3] (24 bytes) to f32[5] "
     "(20 bytes)"),
    ("iota", [], {"iota_dimension": 1}, "s32[4]", "iota_dimension 1 is out of range for rank 1"),
    ("iota", [], {"iota_dimension": 0}, "s32[]", "must have rank >= 1"),
    ("iota", [], {"iota_dimension": 0}, "pred[3]", "cannot count in pred"),
    ("transpose", ["f32[2,3,4]"], {"dimensions": (0, 0, 1)}, None, "dimensions={0,0,1} is not a "
     "permutation of the operand's 3 dimensions"),
    ("transpose", ["f32[2,3]"], {}, None, "transpose: needs the attribute dimensions"),
    ("reverse", ["f32[2,3]"], {"dimensions": (2,)}, None, "reverse dimension 2 is out of range "
     "for rank 2"),
    ("reverse", ["f32[2,3]"], {"dimensions": (1, 1)}, None, "repeats a dimension"),
    ("slice", ["f32[10,5]"], {"slice": slices((2, 11), (0, 5))}, None, "dimension 0: range "
     "[2:11] must satisfy 0 <= start <= limit <= 10"),
    ("slice", ["f32[10]"], {"slice": slices((5, 4))}, None, "0 <= start <= limit"),
    ("slice", ["f32[10]"], {"slice": slices((0, 4, 0))}, None, "stride 0 must be positive"),
    ("slice", ["f32[10,5]"], {"slice": slices((0, 4))}, None, "one [start:limit:stride] range "
     "per dimension"),
    ("dynamic-slice", ["f32[10,5]", "s32[]", "s32[]"], {"dynamic_slice_sizes": (2, 6)}, None,
     "slice size 6 of dimension 1 must be within [0, 5]"),
    ("dynamic-slice", ["f32[10,5]", "s32[]"], {"dynamic_slice_sizes": (2, 5)}, None,
     "needs one start index operand per operand dimension (2), got 1"),
    ("dynamic-slice", ["f32[10]", "f32[]"], {"dynamic_slice_sizes": (2,)}, None,
     "start index (operand 1) must be an integer"),
    ("dynamic-slice", ["f32[10,5]", "s32[]", "s64[]"], {"dynamic_slice_sizes": (2, 5)}, None,
     "start indices must share one type"),
    ("dynamic-slice", ["f32[10]", "s32[1]"], {"dynamic_slice_sizes": (2,)}, None,
     "start index (operand 1) must be a scalar"),
    ("dynamic-update-slice", ["f32[10,5]", "f32[2,6]", "s32[]", "s32[]"], {}, None,
     "update dimension 1 has size 6, larger than the operand's 5"),
    ("dynamic-update-slice", ["f32[10,5]", "s32[2,5]", "s32[]", "s32[]"], {}, None,
     "the update has element type s32 but the operand has f32"),
    ("concatenate", ["f32[2,3]", "f32[4,2]"], {"dimensions": (0,)}, None, "operand 1 f32[4,2] and "
     "operand 0 f32[2,3] differ in dimension 1, which is not the concatenate dimension 0"),
    ("concatenate", ["f32[2,3]", "f32[2,3]"], {"dimensions": (2,)}, None,
     "concatenate dimension 2 is out of range for rank 2"),
    ("concatenate", ["f32[2,3]", "s32[2,3]"], {"dimensions": (0,)}, None,
     "operand 1 has element type s32 but operand 0 has f32"),
    ("concatenate", ["f32[2,3]", "f32[2]"], {"dimensions": (0,)}, None, "operand 1 has rank 1"),
    ("concatenate", ["f32[2]"], {"dimensions": (0, 1)}, None, "must hold exactly one dimension"),
    ("pad", ["f32[3]", "f32[]"], {"padding": padding("0_0_-1")}, None,
     "interior padding -1 must not be negative"),
    ("pad", ["f32[3]", "f32[]"], {"padding": padding("-4_0")}, None, "gives a negative size -1"),
    ("pad", ["f32[3]", "f32[1]"], {"padding": padding("0_0")}, None,
     "the padding value (operand 1) must be a scalar"),
    ("pad", ["f32[3]", "s32[]"], {"padding": padding("0_0")}, None,
     "the padding value has element type s32"),
    ("pad", ["f32[3,2]", "f32[]"], {"padding": padding("0_0")}, None,
     "padding=0_0 has 1 dimensions but the operand f32[3,2] has rank 2"),
    ("get-dimension-size", ["f32[3,4]"], {"dimensions": (2,)}, None,
     "dimension 2 is out of range for rank 2"),
    ("set-dimension-size", ["f32[3,4]", "f32[]"], {"dimensions": (0,)}, None,
     "the size (operand 1) must be s32[]"),
    ("gather", ["f32[10,4]", "s32[5,1]"], {**EMBED, "slice_sizes": (2, 4)}, None,
     "slice size 2 of collapsed or batching dimension 0 must be at most 1"),
    ("gather", ["f32[10,4]", "f32[5,1]"], EMBED, None, "the indices must be integers"),
    ("gather", ["f32[10,4]", "s32[5,2]"], EMBED, None, "start_index_map={0} has 1 entries but "
     "the index vectors (dimension 1 of the indices) have 2 components"),
    ("gather", ["f32[10,4]", "s32[5,1]"], {**EMBED, "index_vector_dim": 3}, None,
     "index_vector_dim=3 must be within [0, 2]"),
    ("gather", ["f32[10,4]", "s32[5,1]"], {**EMBED, "offset_dims": (2,)}, None,
     "offset_dims={2} holds 2, outside [0, 2)"),
    ("gather", ["f32[10,4]", "s32[5,1]"], {**EMBED, "collapsed_slice_dims": ()}, None,
     "must together count the operand's rank 2"),
    ("gather", ["f32[10,4]", "s32[5,1]"], {**EMBED, "slice_sizes": (1, 5)}, None,
     "slice size 5 of operand dimension 1 must be within [0, 4]"),
    ("gather", ["s32[2,3,4,2]", "s64[2,3,3,2]"], BATCHED, None, "batching operand dimension 0 "
     "(size 2) does not match indices dimension 1 (size 3)"),
    ("gather", ["s32[2,3,4,2]", "s64[2,2,3,2]"], {**BATCHED, "start_indices_batching_dims": (3,)},
     None, "must not hold index_vector_dim=3"),
    ("gather", ["s32[2,3,4,2]", "s64[2,2,3,2]"], {**BATCHED, "start_index_map": (0, 1)}, None,
     "start_index_map={0,1} and operand_batching_dims={0} share dimension 0"),
    ("gather", ["s32[2,3,4,2]", "s64[2,2,3,2]"],
     {**BATCHED, "collapsed_slice_dims": (0,), "offset_dims": (3, 4)}, None,
     "collapsed_slice_dims={0} and operand_batching_dims={0} share dimension 0"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "f32[6,4]"], SCATTER, None,
     "update scatter dimension 0 has size 6 but the matching indices dimension has size 5"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "f32[5,5]"], SCATTER, None,
     "update window dimension 1 has size 5, larger than the operand's corresponding bound 4"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "f32[5]"], SCATTER, None,
     "the updates f32[5] must have rank 2"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "s32[5,4]"], SCATTER, None,
     "update 0 has element type s32 but input 0 has f32"),
    ("scatter", ["f32[10,4]", "s32[5,1]"], SCATTER, None, "an odd count >= 3"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "f32[5,4]"], {**SCATTER, "to_apply": reducer("s32")},
     None, "accumulator parameter for input 0 is s32[], expected f32[]"),
    ("scatter", ["f32[10,4]", "s32[5,1]", "f32[5,4]"],
     {**SCATTER, "scatter_dims_to_operand_dims": (2,)}, None,
     "scatter_dims_to_operand_dims={2} holds 2, outside [0, 2)"),
    ("scatter", ["s64[2,3,4,2]", "s64[2,2,3,2]", "s64[2,2,3,2,2]"],
     {**SCATTER_BATCHED, "input_batching_dims": (1,), "inserted_window_dims": (0,)}, None,
     "batching operand dimension 1 (size 3) does not match indices dimension 1 (size 2)"),
]


def case_id(case) -> str:
    return f"{case[0]}({', '.join(case[1])})"


@pytest.mark.parametrize("case", OK_CASES, ids=case_id)
def test_ok(case):
    opcode, operands, attrs, declared, expected = case
    assert infer(opcode, *operands, declared=declared, **attrs) == expected


@pytest.mark.parametrize("case", ERROR_CASES, ids=case_id)
def test_error(case):
    opcode, operands, attrs, declared, message = case
    with pytest.raises(ShapeError, match=re.escape(message)):
        infer(opcode, *operands, declared=declared, **attrs)


def test_broadcast_takes_result_type_from_operand():
    # The rule infers the element type; check_shape then rejects a declared mismatch.
    assert infer("broadcast", "s32[3]", declared="f32[3]", dimensions=(0,)) == "s32[3]"


def test_transpose_permutes_dynamic_dimensions():
    assert infer("transpose", "f32[<=2,3]", dimensions=(1, 0)) == "f32[3,<=2]"
