"""Shape inference of linear algebra and reductions: dot, convolution, fft,
cholesky, triangular-solve, batch norms, reduce, reduce-window,
select-and-scatter, sort and topk."""

import re

import pytest

from tests.hlo.shape_inference_util import computation, infer, reducer, window
from xlapy.errors import ShapeError
from xlapy.hlo.attributes import ConvolutionDimensionNumbers, FftType, TriangularSolveTranspose

MATMUL = {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}
BATCHED = {"lhs_batch_dims": (0,), "rhs_batch_dims": (0,), "lhs_contracting_dims": (2,),
           "rhs_contracting_dims": (1,)}
NHWC = ConvolutionDimensionNumbers.from_text("b01f_01io->b01f")
NCHW = ConvolutionDimensionNumbers.from_text("bf01_oi01->bf01")
CONV = {"dim_labels": NHWC, "window": window("3x3", pad="1_1x1_1")}
ARGMAX = computation("argmax", ["f32[]", "s32[]", "f32[]", "s32[]"], "(f32[], s32[])")
GE = computation("ge", ["f32[]", "f32[]"], "pred[]")
LESS2 = computation("less2", ["f32[]", "f32[]", "s32[]", "s32[]"], "pred[]")
POOL = {"window": window("2x2", stride="2x2"), "to_apply": reducer("f32")}
SAS = {"window": window("2x2", stride="2x2"), "select": GE, "scatter": reducer("f32")}

OK_CASES = [
    ("dot", ["f32[2,3]", "f32[3,4]"], MATMUL, None, "f32[2,4]"),
    ("dot", ["f32[7,2,3]", "f32[7,3,4]"], BATCHED, None, "f32[7,2,4]"),
    ("dot", ["f32[3]", "f32[3]"], {"lhs_contracting_dims": (0,), "rhs_contracting_dims": (0,)},
     None, "f32[]"),
    ("dot", ["f32[2]", "f32[3]"], {}, None, "f32[2,3]"),
    ("dot", ["bf16[2,3]", "bf16[3,4]"], MATMUL, "f32[2,4]", "f32[2,4]"),
    ("dot", ["s8[2,3]", "s8[3,4]"], MATMUL, "s32[2,4]", "s32[2,4]"),
    ("dot", ["f32[2,3]", "f32[3,4]"], MATMUL, "bf16[2,4]", "bf16[2,4]"),
    ("dot", ["s8[2,3]", "bf16[3,4]"], MATMUL, None, "bf16[2,4]"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], CONV, None, "f32[1,5,5,8]"),
    ("convolution", ["f32[2,3,9,9]", "f32[8,3,3,3]"],
     {"dim_labels": NCHW, "window": window("3x3", stride="2x2")}, None, "f32[2,8,4,4]"),
    ("convolution", ["f32[1,5,5,4]", "f32[3,3,2,6]"], {**CONV, "feature_group_count": 2}, None,
     "f32[1,5,5,6]"),
    ("convolution", ["f32[4,5,5,3]", "f32[1,1,3,6]"],
     {"dim_labels": NHWC, "window": window("1x1"), "batch_group_count": 2}, None,
     "f32[2,5,5,6]"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"],
     {"dim_labels": NHWC, "window": window("3x3", lhs_dilate="2x2", rhs_dilate="2x2")}, None,
     "f32[1,5,5,8]"),
    ("convolution", ["f32[1,3]", "f32[3,4]"],
     {"dim_labels": ConvolutionDimensionNumbers.from_text("bf_io->bf")}, None, "f32[1,4]"),
    ("fft", ["c64[4,8]"], {"fft_type": FftType.FFT, "fft_length": (8,)}, None, "c64[4,8]"),
    ("fft", ["c128[4,8]"], {"fft_type": FftType.IFFT, "fft_length": (4, 8)}, None, "c128[4,8]"),
    ("fft", ["f32[4,8]"], {"fft_type": FftType.RFFT, "fft_length": (8,)}, None, "c64[4,5]"),
    ("fft", ["f64[3,4,7]"], {"fft_type": FftType.RFFT, "fft_length": (4, 7)}, None,
     "c128[3,4,4]"),
    ("fft", ["c64[4,5]"], {"fft_type": FftType.IRFFT, "fft_length": (8,)}, None, "f32[4,8]"),
    ("fft", ["c64[4,5]"], {"fft_type": FftType.IRFFT, "fft_length": (9,)}, None, "f32[4,9]"),
    ("cholesky", ["f32[5,3,3]"], {"lower": True}, None, "f32[5,3,3]"),
    ("triangular-solve", ["f32[3,3]", "f32[3,5]"], {"left_side": True}, None, "f32[3,5]"),
    ("triangular-solve", ["c64[2,3,3]", "c64[2,5,3]"],
     {"left_side": False, "transpose_a": TriangularSolveTranspose.ADJOINT}, None, "c64[2,5,3]"),
    ("batch-norm-training", ["f32[2,3,4]", "f32[3]", "f32[3]"], {"feature_index": 1}, None,
     "(f32[2,3,4], f32[3], f32[3])"),
    ("batch-norm-inference", ["f32[2,3,4]", "f32[4]", "f32[4]", "f32[4]", "f32[4]"],
     {"feature_index": 2, "epsilon": 0.001}, None, "f32[2,3,4]"),
    ("batch-norm-grad", ["f32[2,3]", "f32[2]", "f32[2]", "f32[2]", "f32[2,3]"],
     {"feature_index": 0}, None, "(f32[2,3], f32[2], f32[2])"),
    ("ragged-dot", ["f32[8,4]", "f32[2,4,5]", "s32[2]"], {}, "f32[8,5]", "f32[8,5]"),
    ("scaled-dot", ["f8e4m3fn[8,4]", "f8e4m3fn[4,5]", "f32[8,1]", "f32[1,5]"], {}, "f32[8,5]",
     "f32[8,5]"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,), "to_apply": reducer("f32")}, None,
     "f32[2]"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (0, 1), "to_apply": reducer("f32")}, None,
     "f32[]"),
    ("reduce", ["f32[2,3]", "s32[2,3]", "f32[]", "s32[]"],
     {"dimensions": (1,), "to_apply": ARGMAX}, None, "(f32[2], s32[2])"),
    ("reduce-window", ["f32[4,6]", "f32[]"], POOL, None, "f32[2,3]"),
    ("reduce-window", ["f32[4,6]", "f32[]"],
     {"window": window("3x3", pad="1_1x1_1"), "to_apply": reducer("f32")}, None, "f32[4,6]"),
    ("reduce-window", ["f32[4]", "s32[4]", "f32[]", "s32[]"],
     {"window": window("2", stride="2"), "to_apply": ARGMAX}, None, "(f32[2], s32[2])"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,3]", "f32[]"], SAS, None, "f32[4,6]"),
    ("sort", ["f32[5]"], {"dimensions": (0,), "to_apply": GE}, None, "f32[5]"),
    ("sort", ["f32[2,5]", "s32[2,5]"], {"dimensions": (1,), "to_apply": LESS2,
                                        "is_stable": True}, None, "(f32[2,5], s32[2,5])"),
    ("topk", ["f32[3,10]"], {"k": 4, "largest": True}, None, "(f32[3,4], s32[3,4])"),
    ("topk", ["bf16[10]"], {"k": 10}, None, "(bf16[10], s32[10])"),
]

ERROR_CASES = [
    ("dot", ["f32[2,3]", "f32[4,5]"], MATMUL, None, "dot: lhs contracting dimension 1 (size 3) "
     "does not match rhs contracting dimension 0 (size 4)"),
    ("dot", ["f32[7,2,3]", "f32[6,3,4]"], BATCHED, None, "lhs batch dimension 0 (size 7) does not "
     "match rhs batch dimension 0 (size 6)"),
    ("dot", ["f32[2,3]", "f32[3,4]"], {"lhs_contracting_dims": (2,), "rhs_contracting_dims": (0,)},
     None, "lhs_contracting_dims={2} holds 2, out of range for the lhs of rank 2"),
    ("dot", ["f32[2,3]", "f32[3,4]"], {"lhs_contracting_dims": (1,)}, None,
     "lhs_contracting_dims={1} and rhs_contracting_dims={} must have equal lengths"),
    ("dot", ["f32[3,3]", "f32[3,3]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,),
                                       "lhs_batch_dims": (1,), "rhs_batch_dims": (1,)}, None,
     "lhs dimension numbers repeat a dimension"),
    ("dot", ["s32[2,3]", "s32[3,4]"], MATMUL, "s8[2,4]", "the declared result type s8 is narrower "
     "than the operand type s32"),
    ("dot", ["f32[2,3]", "(f32[3,4])"], MATMUL, None, "the rhs must be an array"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,4,8]"], CONV, None, "input features 3 / "
     "feature_group_count 1 must equal the kernel's input features 4"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"],
     {**CONV, "window": window("2x2", pad="1_1x1_1")}, None,
     "window sizes 2x2 do not match the kernel's spatial dimensions 3x3"),
    ("convolution", ["f32[1,5,3]", "f32[3,3,3,8]"], CONV, None,
     "the input f32[1,5,3] must have rank 4"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], {"dim_labels": NHWC}, None,
     "window {} has 0 dimensions but the convolution has 2 spatial dimensions"),
    ("convolution", ["f32[1,5,5,4]", "f32[3,3,2,5]"], {**CONV, "feature_group_count": 2}, None,
     "kernel output features 5 must be divisible by feature_group_count 2"),
    ("convolution", ["f32[3,5,5,3]", "f32[1,1,3,6]"],
     {"dim_labels": NHWC, "window": window("1x1"), "batch_group_count": 2}, None,
     "input batch 3 must be divisible by batch_group_count 2"),
    ("convolution", ["f32[4,5,5,4]", "f32[1,1,2,6]"],
     {"dim_labels": NHWC, "window": window("1x1"), "batch_group_count": 2,
      "feature_group_count": 2}, None, "cannot both exceed 1"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], {"window": window("3x3")}, None,
     "needs the attribute dim_labels"),
    ("fft", ["c64[4,8]"], {"fft_type": FftType.RFFT, "fft_length": (8,)}, None,
     "RFFT needs an f32 or f64 operand, got c64"),
    ("fft", ["f32[4,8]"], {"fft_type": FftType.FFT, "fft_length": (8,)}, None,
     "FFT needs a complex operand, got f32"),
    ("fft", ["c64[4,5]"], {"fft_type": FftType.IRFFT, "fft_length": (16,)}, None,
     "IRFFT with fft_length={16} needs innermost dimensions {9}, got c64[4,5]"),
    ("fft", ["f32[4,8]"], {"fft_type": FftType.RFFT, "fft_length": (4, 8, 2, 1)}, None,
     "must have 1 to 3 entries"),
    ("fft", ["c64[8]"], {"fft_type": FftType.FFT, "fft_length": (4, 8)}, None,
     "a rank-2 FFT needs an operand of rank >= 2"),
    ("fft", ["c64[8]"], {"fft_type": "FFT", "fft_length": (8,)}, None,
     "attribute fft_type must be one of FFT, IFFT, RFFT, IRFFT"),
    ("cholesky", ["f32[3,4]"], {}, None, "the two minor dimensions of 'a' f32[3,4] must be equal"),
    ("cholesky", ["s32[3,3]"], {}, None, "'a' must be floating-point or complex, got s32"),
    ("cholesky", ["f32[3]"], {}, None, "'a' f32[3] must have rank >= 2"),
    ("triangular-solve", ["f32[3,3]", "f32[3,5]"], {"left_side": False}, None,
     "'a' f32[3,3] and 'b' f32[3,5] do not share a dimension (left_side=false)"),
    ("triangular-solve", ["f32[2,3,3]", "f32[4,3,5]"], {"left_side": True}, None,
     "the batch dimensions of 'a' f32[2,3,3] and 'b' f32[4,3,5] differ"),
    ("triangular-solve", ["f32[3,3]", "f64[3,5]"], {"left_side": True}, None,
     "'b' has element type f64 but 'a' has f32"),
    ("batch-norm-training", ["f32[2,3,4]", "f32[4]", "f32[3]"], {"feature_index": 1}, None,
     "scale (operand 1) has shape f32[4]; it must be rank 1 with the feature count 3"),
    ("batch-norm-training", ["f32[2,3]", "f32[3]", "f32[3]"], {"feature_index": 2}, None,
     "feature_index=2 is out of range"),
    ("batch-norm-training", ["s32[2,3]", "s32[3]", "s32[3]"], {"feature_index": 1}, None,
     "the operand must be floating-point, got s32"),
    ("batch-norm-inference", ["f32[2,3]", "f32[3]", "f32[3]", "f32[3]", "f16[3]"],
     {"feature_index": 1}, None, "variance (operand 4) has element type f16"),
    ("batch-norm-grad", ["f32[2,3]", "f32[2]", "f32[2]", "f32[2]", "f32[2,4]"],
     {"feature_index": 0}, None, "grad_output f32[2,4] must have the operand's shape f32[2,3]"),
    ("ragged-dot", ["f32[8,4]", "f32[2,4,5]", "s32[2]"], {}, None,
     "the result of this dot is only the instruction's declared shape says so"),
    ("scaled-dot", ["f32[8,4]", "f32[4,5]", "f32[8,1]", "f32[1,5]"], {}, None,
     "only the instruction's declared shape says so"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (2,), "to_apply": reducer("f32")}, None,
     "reduced dimension 2 is out of range for rank 2"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1, 1), "to_apply": reducer("f32")}, None,
     "repeats a dimension"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,), "to_apply": reducer("s32")}, None,
     "to_apply computation reduce_s32_1: accumulator parameter for input 0 is s32[], "
     "expected f32[]"),
    ("reduce", ["f32[2,3]", "s32[]"], {"dimensions": (1,), "to_apply": reducer("f32")}, None,
     "init value 0 has shape s32[], expected f32[] like the reducer's accumulator"),
    ("reduce", ["f32[2,3]", "f32[3]"], {"dimensions": (1,), "to_apply": reducer("f32")}, None,
     "init value 0 (operand 1) must be a scalar"),
    ("reduce", ["f32[2,3]", "s32[2,2]", "f32[]", "s32[]"], {"dimensions": (1,), "to_apply": ARGMAX},
     None, "input 1 has shape s32[2,2] but input 0 has f32[2,3]; all inputs need equal "
     "dimensions"),
    ("reduce", ["f32[2,3]", "s32[2,3]", "f32[]", "s32[]"],
     {"dimensions": (1,), "to_apply": reducer("f32")}, None,
     "to_apply computation reduce_f32_1 must take 4 parameters"),
    ("reduce", ["f32[2,3]", "f32[]", "f32[]"], {"dimensions": (1,), "to_apply": reducer("f32")},
     None, "expects n inputs followed by n init values, got 3 operands"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,),
                                       "to_apply": computation("r", ["f32[]"] * 2, "f32[2]")},
     None, "to_apply computation r must return scalars, returns f32[2]"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (1,)}, None,
     "reduce: needs the attribute to_apply"),
    ("reduce-window", ["f32[4,6]", "f32[]"], {**POOL, "window": window("2", stride="2")}, None,
     "window {size=2 stride=2} has 1 dimensions but the windowed operand has 2"),
    ("reduce-window", ["f32[4,6]", "f32[]"], {**POOL, "window": window("2x0")}, None,
     "window dimension 1: size 0 and stride 1 must be positive"),
    ("reduce-window", ["f32[4,6]", "f32[]"], {**POOL, "window": window("2x2", pad="0_0x-7_0")},
     None, "window dimension 1: padding -7_0 leaves a negative size -1"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,2]", "f32[]"], SAS, None,
     "the source f32[2,2] must have the windowed operand's shape f32[2,3]"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,3]", "f32[]"],
     {**SAS, "select": computation("sel", ["f32[]", "f32[]"], "f32[]")}, None,
     "select computation sel must return pred[], returns f32[]"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,3]", "f32[]"],
     {**SAS, "select": computation("sel", ["s32[]", "s32[]"], "pred[]")}, None,
     "select computation sel must take two f32[] parameters, takes (s32[], s32[])"),
    ("sort", ["f32[5]"], {"dimensions": (0,),
                          "to_apply": computation("c", ["f32[]", "f32[]"], "f32[]")}, None,
     "comparator c must return pred[], returns f32[]"),
    ("sort", ["f32[5]", "s32[5]"], {"dimensions": (0,), "to_apply": GE}, None,
     "comparator ge must take 4 parameters (two per operand), takes 2"),
    ("sort", ["f32[2,5]", "s32[2,5]"], {"dimensions": (1,), "to_apply": computation(
        "c", ["f32[]", "f32[]", "f32[]", "f32[]"], "pred[]")}, None,
     "comparator c parameter 2 is f32[], expected s32[] (an element of operand 1)"),
    ("sort", ["f32[5]", "s32[4]"], {"dimensions": (0,), "to_apply": LESS2}, None,
     "sorted operands need equal dimensions"),
    ("sort", ["f32[5]"], {"dimensions": (1,), "to_apply": GE}, None,
     "sort dimension 1 is out of range for rank 1"),
    ("topk", ["f32[3,10]"], {"k": 11}, None, "k=11 must be within [0, 10]"),
    ("topk", ["f32[]"], {"k": 1}, None, "the operand f32[] must have rank >= 1"),
    ("topk", ["f32[4]"], {}, None, "topk: needs the attribute k"),
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


def test_convolution_strided_dilated_output_size():
    # input 10, lhs_dilate 2 -> 19, pad 1+2 -> 22; window 3 rhs_dilate 2 -> 5; stride 3 -> 6.
    attrs = {"dim_labels": ConvolutionDimensionNumbers.from_text("b0f_0io->b0f"),
             "window": window("3", stride="3", pad="1_2", lhs_dilate="2", rhs_dilate="2")}
    assert infer("convolution", "f32[1,10,2]", "f32[3,2,4]", **attrs) == "f32[1,6,4]"


def test_window_larger_than_input_gives_zero():
    attrs = {"window": window("5"), "to_apply": reducer("f32")}
    assert infer("reduce-window", "f32[3]", "f32[]", **attrs) == "f32[0]"
