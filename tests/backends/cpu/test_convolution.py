"""The CPU backend's convolution (kernels/convolution.py) against the interpreter:
random dimension numbers, layouts, windows (strides, negative padding, lhs/rhs
dilation, reversal), feature and batch groups, every element type, bias+relu
epilogues (kOutput fusions); the im2col + GEMM fast path in both output layouts
and on threads, its malloc-failure fallback and its output-fusion form; the
JAX-lowered modules of the corpus. No instruction may go to the interpreter
fallback."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from xlapy.backends.cpu import special_kernels
from xlapy.backends.cpu.kernels import convolution
from xlapy.errors import XlapyError
from xlapy.hlo.attributes import ConvolutionDimensionNumbers, Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Layout, Shape
from xlapy.hlo.shape_inference import infer_shape

REPO = Path(__file__).resolve().parents[3]
TOLERANCE = {"f16": 4e-3, "bf16": 3e-2, "f32": 2e-5, "f64": 1e-12, "c64": 2e-5}
"""Relative to the output's largest magnitude: f32 sums in f32 here, in f64 in the
interpreter; narrow floats round once either way but may sum in another order."""


# -- shared helpers (test_windows uses them too) --------------------------------------------
@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    """Every module is compiled here, so the kernels under test are what runs."""
    flags = os.environ.get("XLAPY_FLAGS", "")
    monkeypatch.setenv("XLAPY_FLAGS", f"{flags} --xlapy_cpu_cache_dir=off")


def sample(t: PrimitiveType, dims, rng) -> np.ndarray:
    if t.is_pred:
        return rng.integers(0, 2, dims).astype(bool)
    if t.is_integral:
        return rng.integers(-9 if t.is_signed_int else 0, 10, dims).astype(t.numpy)
    values = rng.standard_normal(dims)
    if t.is_complex:
        values = values + 1j * rng.standard_normal(dims)
    return values.astype(t.numpy)


def assert_close(actual, expected, type_name: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    tolerance = TOLERANCE.get(type_name, 0)
    if tolerance == 0:
        assert np.array_equal(actual, expected)
        return
    wide = complex if actual.dtype.kind == "c" else np.float64
    a, e = actual.astype(wide), expected.astype(wide)
    scale = max(1.0, float(np.abs(e[np.isfinite(e)]).max(initial=0)))
    assert np.allclose(a, e, rtol=tolerance, atol=tolerance * scale, equal_nan=True), \
        np.abs(a - e).max()


def run_both(text: str, args: list, type_names: list[str]):
    """Compile for the CPU (no fallbacks), run, compare every output with the interpreter."""
    executable = xlapy.compile(text, backend="cpu")
    assert executable.fallbacks == []
    got = _leaves(executable.execute(*args))
    want = _leaves(xlapy.execute(text, args, backend="interpreter"))
    assert len(got) == len(want) == len(type_names)
    for g, w, t in zip(got, want, type_names):
        assert_close(g, w, t)
    return executable


def _leaves(values) -> list:
    """The arrays of a result, nested tuples flattened."""
    if isinstance(values, (list, tuple)):
        return [leaf for value in values for leaf in _leaves(value)]
    return [values]


@pytest.fixture
def fast_paths(monkeypatch):
    """Counts the convolutions the im2col + GEMM path emits."""
    calls = []
    original = convolution.emit_units

    def spy(cg, b, instruction, *args, **kwargs):
        calls.append(instruction.name)
        return original(cg, b, instruction, *args, **kwargs)

    monkeypatch.setattr(convolution, "emit_units", spy)
    return calls


# -- random convolutions --------------------------------------------------------------------
def _labels(draw, letters: str, n: int) -> str:
    return "".join(draw(st.permutations(list(letters) + [str(i) for i in range(n)])))


def _layout(draw, labels: str, style: str) -> Layout:
    """Physical order (major to minor) `style`: 'bsf' (features last), 'bfs', or random."""
    rank = len(labels)
    if style == "random":
        major_to_minor = draw(st.permutations(range(rank)))
    else:
        spatial = [labels.index(str(i)) for i in range(rank - 2)]
        b, f = labels.index("b"), labels.index("f")
        major_to_minor = [b, *spatial, f] if style == "bsf" else [b, f, *spatial]
    return Layout(tuple(reversed(list(major_to_minor))))


@st.composite
def conv_case(draw, type_name: str):
    """(lhs, rhs, out shapes, window, dim labels, feature groups, batch groups)."""
    n = draw(st.sampled_from([1, 2, 2, 3]))
    feature_groups = draw(st.sampled_from([1, 1, 1, 2, 3]))
    batch_groups = draw(st.sampled_from([1, 1, 2])) if feature_groups == 1 else 1
    group_in = draw(st.integers(1, 4))
    group_out = draw(st.sampled_from([1, 2, 4, 5, 8]))
    batch = draw(st.integers(1, 2)) * batch_groups
    dims = []
    for _ in range(n):
        size = draw(st.integers(1, 3))
        dims.append(WindowDimension(
            size, draw(st.integers(1, 3)), draw(st.integers(-1, 2)), draw(st.integers(-1, 2)),
            draw(st.sampled_from([1, 1, 2])), draw(st.sampled_from([1, 1, 2])),
            draw(st.booleans())))
    inputs = [draw(st.integers(1, 6)) for _ in range(n)]
    lhs_labels, rhs_labels = _labels(draw, "bf", n), _labels(draw, "io", n)
    out_labels = _labels(draw, "bf", n)
    text = f"{lhs_labels}_{rhs_labels}->{out_labels}"
    dnums = ConvolutionDimensionNumbers.from_text(text)
    lhs, rhs = [0] * (n + 2), [0] * (n + 2)
    lhs[dnums.input_batch_dimension] = batch
    lhs[dnums.input_feature_dimension] = group_in * feature_groups
    rhs[dnums.kernel_input_feature_dimension] = group_in
    rhs[dnums.kernel_output_feature_dimension] = group_out * feature_groups * batch_groups
    for i in range(n):
        lhs[dnums.input_spatial_dimensions[i]] = inputs[i]
        rhs[dnums.kernel_spatial_dimensions[i]] = dims[i].size
    t = PrimitiveType.from_text(type_name)
    lhs_shape = Shape.array(t, lhs, _layout(draw, lhs_labels, draw(
        st.sampled_from(["bsf", "bfs", "random"]))))
    rhs_shape = Shape.array(t, rhs, Layout(tuple(draw(st.permutations(range(n + 2))))))
    attrs = {"window": Window(tuple(dims)), "dim_labels": dnums,
             "feature_group_count": feature_groups, "batch_group_count": batch_groups}
    try:
        out = infer_shape(Opcode.CONVOLUTION, [lhs_shape, rhs_shape], attrs)
    except XlapyError:
        out = None
    if out is None:   # negative padding past the input: drop the padding
        dims = [WindowDimension(d.size, d.stride, 0, 0, d.window_dilation, d.base_dilation,
                                d.window_reversal) for d in dims]
        attrs["window"] = Window(tuple(dims))
        out = infer_shape(Opcode.CONVOLUTION, [lhs_shape, rhs_shape], attrs)
    out = out.with_layout(_layout(draw, out_labels, draw(
        st.sampled_from(["bsf", "bsf", "bfs", "random"]))))
    return lhs_shape, rhs_shape, out, attrs


def conv_module(cases, epilogues=None) -> str:
    """One module computing every case (a bias + relu after the marked ones)."""
    lines, outputs, number = [], [], 0
    for i, (lhs, rhs, out, attrs) in enumerate(cases):
        lines += [f"  l{i} = {lhs.to_text()} parameter({number})",
                  f"  k{i} = {rhs.to_text()} parameter({number + 1})"]
        number += 2
        extra = "".join(f", {key}={attrs[key]}" for key in
                        ("feature_group_count", "batch_group_count") if attrs[key] != 1)
        lines.append(f"  c{i} = {out.to_text()} convolution(l{i}, k{i}), "
                     f"window={attrs['window'].to_text()}, "
                     f"dim_labels={attrs['dim_labels'].to_text()}{extra}")
        result = f"c{i}"
        if epilogues and epilogues[i]:
            t = out.element_type.value
            feature = attrs["dim_labels"].output_feature_dimension
            bias = Shape.array(out.element_type, [out.dimensions[feature]])
            lines += [f"  b{i} = {bias.to_text()} parameter({number})",
                      f"  bb{i} = {out.to_text()} broadcast(b{i}), dimensions={{{feature}}}",
                      f"  sm{i} = {out.to_text()} add(c{i}, bb{i})",
                      f"  z{i} = {t}[] constant(0)",
                      f"  zb{i} = {out.to_text()} broadcast(z{i}), dimensions={{}}",
                      f"  r{i} = {out.to_text()} maximum(sm{i}, zb{i})"]
            number += 1
            result = f"r{i}"
        outputs.append((result, out))
    tuple_shape = ", ".join(o.to_text() for _, o in outputs)
    lines.append(f"  ROOT t = ({tuple_shape}) tuple({', '.join(r for r, _ in outputs)})")
    return "HloModule convolutions\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


def module_arguments(text: str, seed: int) -> list:
    module = xlapy.hlo.parse(text)
    rng = np.random.default_rng(seed)
    return [sample(p.shape.element_type, p.shape.dimensions, rng)
            for p in module.entry_computation.parameters]


@settings(max_examples=4)
@given(data=st.data(), type_name=st.sampled_from(["f32", "f32", "f64"]))
def test_random_float_convolutions_match_the_interpreter(data, type_name):
    cases = data.draw(st.lists(conv_case(type_name), min_size=4, max_size=6))
    epilogues = data.draw(st.lists(st.booleans(), min_size=len(cases), max_size=len(cases)))
    text = conv_module(cases, epilogues)
    run_both(text, module_arguments(text, 0), [type_name] * len(cases))


@settings(max_examples=7)
@given(data=st.data(), type_name=st.sampled_from(["f16", "bf16", "s32", "s8", "u8", "pred",
                                                  "c64"]))
def test_random_convolutions_of_other_types_match_the_interpreter(data, type_name):
    cases = data.draw(st.lists(conv_case(type_name), min_size=3, max_size=4))
    text = conv_module(cases)
    run_both(text, module_arguments(text, 1), [type_name] * len(cases))


def test_mixed_precision_convolutions():
    """s8 x s8 -> s32 (wraps in 32 bits) and bf16 x bf16 -> f32 (no bf16 rounding)."""
    text = """HloModule mixed
ENTRY e {
  a = s8[2,5,5,3] parameter(0)
  b = s8[3,3,3,4] parameter(1)
  c = s32[2,5,5,4] convolution(a, b), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  x = bf16[1,4,6,6] parameter(2)
  y = bf16[4,4,2,2] parameter(3)
  z = f32[1,4,5,5] convolution(x, y), window={size=2x2}, dim_labels=bf01_oi01->bf01
  ROOT t = (s32[2,5,5,4], f32[1,4,5,5]) tuple(c, z)
}
"""
    rng = np.random.default_rng(2)
    args = [rng.integers(-128, 128, (2, 5, 5, 3)).astype(np.int8),
            rng.integers(-128, 128, (3, 3, 3, 4)).astype(np.int8),
            sample(PrimitiveType.BF16, (1, 4, 6, 6), rng),
            sample(PrimitiveType.BF16, (4, 4, 2, 2), rng)]
    run_both(text, args, ["s32", "f32"])


# -- the im2col + GEMM fast path --------------------------------------------------------------
FAST = """HloModule fast
ENTRY e {
  a = f32[2,9,8,5] parameter(0)
  ka = f32[3,3,5,16] parameter(1)
  ca = f32[2,5,3,16] convolution(a, ka), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f
  b = f64[2,6,7,7] parameter(2)
  kb = f64[12,6,2,3] parameter(3)
  cb = f64[2,12,8,4] convolution(b, kb), window={size=2x3 stride=1x2 pad=1_1x0_2 lhs_dilate=1x1 rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01
  c = f32[1,10,4] parameter(4)
  kc = f32[3,2,16] parameter(5)
  cc = f32[1,9,16] convolution(c, kc), window={size=3 pad=2_0 lhs_dilate=2 rhs_dilate=2 stride=2}, dim_labels=b0f_0io->b0f, feature_group_count=2
  d = f32[2,4,5,6,3] parameter(6)
  kd = f32[2,2,2,3,8] parameter(7)
  cd = f32[2,3,4,5,8] convolution(d, kd), window={size=2x2x2 pad=0_0x-1_1x0_0}, dim_labels=b012f_012io->b012f
  e = f32[3,6,6,4]{0,3,2,1} parameter(8)
  ke = f32[3,3,4,8]{0,1,2,3} parameter(9)
  ce = f32[3,8,6,6]{2,3,1,0} convolution(e, ke), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->bf10
  ROOT t = (f32[2,5,3,16], f64[2,12,8,4], f32[1,9,16], f32[2,3,4,5,8], f32[3,8,6,6]{2,3,1,0}) tuple(ca, cb, cc, cd, ce)
}
"""


def test_fast_path_layouts_groups_and_windows(fast_paths):
    """Features-last and features-second outputs, patches by row and by column,
    1-D (grouped, lhs-dilated), 2-D, 3-D, negative padding, reversal, transposed
    layouts: all take im2col + GEMM."""
    run_both(FAST, module_arguments(FAST, 3), ["f32", "f64", "f32", "f32", "f32"])
    assert sorted(fast_paths) == ["ca", "cb", "cc", "cd", "ce"]


def test_fast_path_on_threads_and_without_scratch(fast_paths, monkeypatch):
    """Big enough to be split between threads; then again with every malloc of
    patches failing, when the generator computes each unit."""
    text = """HloModule big
ENTRY e {
  x = f32[4,20,20,32] parameter(0)
  k = f32[3,3,32,32] parameter(1)
  ROOT c = f32[4,20,20,32] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""
    args = module_arguments(text, 4)
    run_both(text, args, ["f32"])
    plan = convolution.gemm_plan(xlapy.hlo.parse(text).entry_computation.root_instruction,
                                 Shape.array(PrimitiveType.F32, [4, 20, 20, 32]), 2)
    assert plan is not None and plan.units >= 2
    monkeypatch.setattr(convolution, "scratch_bytes", lambda plan: 1 << 62)
    run_both(text.replace("HloModule big", "HloModule big_no_scratch"), args, ["f32"])
    assert fast_paths == ["c", "c"]


def test_depthwise_and_integer_convolutions_use_the_generator(fast_paths):
    text = """HloModule generated
ENTRY e {
  x = f32[2,7,7,16] parameter(0)
  k = f32[3,3,1,16] parameter(1)
  d = f32[2,7,7,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=16
  y = s32[1,6,6,3] parameter(2)
  w = s32[2,2,3,8] parameter(3)
  i = s32[1,5,5,8] convolution(y, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  k7 = f32[7,7,1,16] parameter(4)
  d7 = f32[2,7,7,16] convolution(x, k7), window={size=7x7 pad=3_3x3_3}, dim_labels=b01f_01io->b01f, feature_group_count=16
  ROOT t = (f32[2,7,7,16], s32[1,5,5,8], f32[2,7,7,16]) tuple(d, i, d7)
}
"""
    run_both(text, module_arguments(text, 5), ["f32", "s32", "f32"])
    assert fast_paths == []


@pytest.fixture
def output_fusions(monkeypatch):
    """Tries convolution.output_fusion before the fusion kernels there are."""
    previous = special_kernels.SPECIAL.get(Opcode.FUSION)
    taken = []

    def dispatch(cg, instruction):
        if convolution.output_fusion(cg, instruction):
            taken.append(instruction.name)
            return True
        return bool(previous and previous(cg, instruction))

    monkeypatch.setitem(special_kernels.SPECIAL, Opcode.FUSION, dispatch)
    return taken


EPILOGUE = """HloModule cnn
ENTRY e {
  x = f32[2,12,12,8] parameter(0)
  w = f32[3,3,8,16] parameter(1)
  bias = f32[16] parameter(2)
  c = f32[2,12,12,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,12,12,16] broadcast(bias), dimensions={3}
  s = f32[2,12,12,16] add(c, bb)
  z = f32[] constant(0)
  zb = f32[2,12,12,16] broadcast(z), dimensions={}
  ROOT r = f32[2,12,12,16] maximum(s, zb)
}
"""


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_bias_relu_output_fusion(output_fusions, layout):
    text = EPILOGUE
    if layout == "nchw":
        text = (text.replace("f32[2,12,12,8]", "f32[2,8,12,12]")
                .replace("f32[3,3,8,16]", "f32[16,8,3,3]")
                .replace("f32[2,12,12,16]", "f32[2,16,12,12]")
                .replace("b01f_01io->b01f", "bf01_oi01->bf01")
                .replace("dimensions={3}", "dimensions={1}"))
    run_both(text.replace("HloModule cnn", f"HloModule cnn_{layout}"),
             module_arguments(text, 6), ["f32"])
    assert output_fusions == ["fusion"]


def test_bias_relu_fusion_through_the_generic_loop_kernel():
    """Without output_fusion the fusion runs in the loop kernel, the convolution from
    its generator (a row of output features per position)."""
    run_both(EPILOGUE, module_arguments(EPILOGUE, 7), ["f32"])


def test_empty_convolutions_and_no_spatial_dimensions():
    text = """HloModule empty
ENTRY e {
  a = f32[0,4,4,2] parameter(0)
  k = f32[2,2,2,3] parameter(1)
  ca = f32[0,3,3,3] convolution(a, k), window={size=2x2}, dim_labels=b01f_01io->b01f
  b = f32[1,4,4,0] parameter(2)
  kb = f32[2,2,0,3] parameter(3)
  cb = f32[1,3,3,3] convolution(b, kb), window={size=2x2}, dim_labels=b01f_01io->b01f
  c = f32[1,1,1,2] parameter(4)
  kc = f32[3,3,2,3] parameter(5)
  cc = f32[1,0,0,3] convolution(c, kc), window={size=3x3}, dim_labels=b01f_01io->b01f
  d = f32[3,4] parameter(6)
  kd = f32[4,5] parameter(7)
  cd = f32[3,5] convolution(d, kd), dim_labels=bf_io->bf
  ROOT t = (f32[0,3,3,3], f32[1,3,3,3], f32[1,0,0,3], f32[3,5]) tuple(ca, cb, cc, cd)
}
"""
    run_both(text, module_arguments(text, 8), ["f32"] * 4)


@pytest.mark.parametrize("name", ["jax_conv2d_nhwc.hlo", "jax_conv_grouped.hlo"])
def test_jax_lowered_convolutions(name):
    text = (REPO / "tests" / "hlo" / "corpus" / name).read_text()
    run_both(text, module_arguments(text, 9), ["f32"])
