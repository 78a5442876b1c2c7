"""The forms of StableHLO's text the parser reads, each in a small hand-written
module run on the interpreter: constants of every dtype and spelling, generic
and pretty op forms, MHLO names, several results, functions and calls, regions
that capture outer values, CHLO ops, locations and attributes."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import xlapy
from xlapy import stablehlo
from xlapy.hlo.opcode import Opcode


def run(body: str, *args, signature: str = "", results: str = "") -> list:
    text = f"""module @t attributes {{mhlo.num_partitions = 1 : i32}} {{
  func.func public @main({signature}) -> ({results}) {{
{body}
  }}
}}"""
    return xlapy.execute(text, list(args), backend="interpreter")


@pytest.mark.parametrize("literal, mlir_type, want", [
    ("dense<1.500000e+00>", "tensor<2xf32>", np.array([1.5, 1.5], np.float32)),
    ("dense<0xFF800000>", "tensor<f32>", np.float32(-np.inf)),
    ("dense<0x7FC00000>", "tensor<f32>", np.float32(np.nan)),
    ("dense<[[1, -2], [3, 4]]>", "tensor<2x2xi64>", np.array([[1, -2], [3, 4]], np.int64)),
    ('dense<"0x0100000002000000FFFFFFFF">', "tensor<3xi32>", np.array([1, 2, -1], np.int32)),
    ('dense<"0x0000803F">', "tensor<2xf32>", np.array([1, 1], np.float32)),
    ("dense<[true, false]>", "tensor<2xi1>", np.array([True, False])),
    ('dense<"0x0100">', "tensor<2xi1>", np.array([True, False])),
    ("dense<4294967295>", "tensor<ui32>", np.uint32(4294967295)),
    ("dense<-1>", "tensor<i8>", np.int8(-1)),
    ("dense<2.500000e-01>", "tensor<bf16>", np.array(0.25, ml_dtypes.bfloat16)),
    ("dense<[1.000000e+00, 6.550400e+04]>", "tensor<2xf16>", np.array([1, 65504], np.float16)),
    ("dense<0.1>", "tensor<f64>", np.float64(0.1)),
    ("dense<(1.000000e+00,-2.000000e+00)>", "tensor<complex<f32>>", np.complex64(1 - 2j)),
    ("dense<[(1.0,2.0), (3.0,4.0)]>", "tensor<2xcomplex<f64>>",
     np.array([1 + 2j, 3 + 4j], np.complex128)),
    ("dense<>", "tensor<0xf32>", np.zeros(0, np.float32)),
    ("dense<3>", "tensor<2x0xi32>", np.zeros((2, 0), np.int32)),
])
def test_constants(literal, mlir_type, want):
    body = f"    %0 = stablehlo.constant {literal} : {mlir_type}\n    return %0 : {mlir_type}"
    (got,) = run(body, results=mlir_type)
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
    np.testing.assert_array_equal(got, want)


def test_generic_forms_and_mhlo_names():
    body = """    %c = "stablehlo.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
    %0 = "stablehlo.broadcast_in_dim"(%c) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %1 = "mhlo.multiply"(%arg0, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %2 = "stablehlo.compare"(%1, %0) <{comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %z) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %4 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%2, %3) : (tensor<3xi1>, tensor<f32>) -> ()"""
    x = np.array([0.5, 1.5, -1], np.float32)
    above, total = run(body, x, signature="%arg0: tensor<3xf32>",
                       results="tensor<3xi1>, tensor<f32>")
    np.testing.assert_array_equal(above, [False, True, False])
    assert total == np.float32(2.0)


def test_several_results_and_private_functions():
    text = """module @calls {
  func.func public @main(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
    %0:2 = call @twice(%arg0) : (tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    %a, %b = func.call @twice(%0#1) : (tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    return %0#0, %b : tensor<4xi32>, tensor<4xi32>
  }
  func.func private @twice(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xi32>
    return %arg0, %0 : tensor<4xi32>, tensor<4xi32>
  }
}"""
    module = stablehlo.parse(text)
    assert len(module.computations) == 2  # @twice is built once and called twice
    x = np.arange(4, dtype=np.int32)
    first, second = xlapy.execute(module, [x], backend="interpreter")
    np.testing.assert_array_equal(first, x)
    np.testing.assert_array_equal(second, 4 * x)


def test_while_and_case_capture_outer_values():
    """Regions that use values defined outside them (MLIR allows it, HLO does not)."""
    body = """    %step = stablehlo.constant dense<2.0> : tensor<f32>
    %scale = stablehlo.multiply %arg1, %arg1 : tensor<f32>
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %0:2 = stablehlo.while(%i = %c0, %acc = %arg1) : tensor<i32>, tensor<f32>
    cond {
      %p = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      %s = stablehlo.multiply %acc, %step : tensor<f32>
      %t = stablehlo.add %s, %scale : tensor<f32>
      stablehlo.return %n, %t : tensor<i32>, tensor<f32>
    }
    %1 = "stablehlo.case"(%arg0) ({
      stablehlo.return %scale : tensor<f32>
    }, {
      %r = stablehlo.negate %0#1 : tensor<f32>
      stablehlo.return %r : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    %p = stablehlo.compare GT, %1, %step, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = "stablehlo.if"(%p) ({
      stablehlo.return %step : tensor<f32>
    }, {
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    return %0#1, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>"""
    x = np.float32(3)
    loop = ((x * 2 + 9) * 2 + 9) * 2 + 9
    for index, case in ((0, 9.0), (1, -loop), (7, -loop)):  # out of range: the last branch
        got = run(body, np.int32(index), x, signature="%arg0: tensor<i32>, %arg1: tensor<f32>",
                  results="tensor<f32>, tensor<f32>, tensor<f32>")
        np.testing.assert_allclose(got, [loop, case, 2.0 if case > 2 else case])


def test_reduce_pretty_forms_and_reduce_window_generic():
    body = """    %c = stablehlo.constant dense<0> : tensor<i32>
    %m = stablehlo.constant dense<-2147483648> : tensor<i32>
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
    %1 = stablehlo.reduce(%arg0 init: %m) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.reduce_window"(%arg0, %c) <{padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 2>}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %3 = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %3 : tensor<i32>
    }) : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
    return %0, %1, %2 : tensor<2xi32>, tensor<i32>, tensor<2x3xi32>"""
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    sums, largest, windows = run(body, x, signature="%arg0: tensor<2x3xi32>",
                                 results="tensor<2xi32>, tensor<i32>, tensor<2x3xi32>")
    np.testing.assert_array_equal(sums, [6, 15])
    assert largest == 6
    np.testing.assert_array_equal(windows, [[1, 3, 5], [4, 9, 11]])


def test_chlo_ops():
    body = """    %0 = chlo.erf_inv %arg0 : tensor<4xf32> -> tensor<4xf32>
    %1 = chlo.square %arg0 : tensor<4xf32> -> tensor<4xf32>
    %2 = chlo.is_inf %1 : tensor<4xf32> -> tensor<4xi1>
    %3 = chlo.broadcast_add %arg0, %arg1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %4 = chlo.tan %arg0 : tensor<4xf32> -> tensor<4xf32>
    %5 = chlo.erfc %arg0 : tensor<4xf32> -> tensor<4xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>"""
    x = np.array([-0.9, -0.25, 0.0, 0.75], np.float32)
    inv, sq, inf, added, tan, erfc = run(
        body, x, np.float32(10), signature="%arg0: tensor<4xf32>, %arg1: tensor<f32>",
        results="tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, "
                "tensor<4xf32>")
    np.testing.assert_allclose([math.erf(v) for v in inv], x, atol=1e-6)
    np.testing.assert_allclose(sq, x * x)
    assert not inf.any()
    np.testing.assert_allclose(added, x + 10)
    np.testing.assert_allclose(tan, np.tan(x), rtol=1e-6)
    np.testing.assert_allclose(erfc, [1 - math.erf(v) for v in x], rtol=1e-6)


def test_locations_attributes_and_annotations_are_read_and_dropped():
    text = """#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> {mhlo.sharding = "{replicated}", jax.buffer_donor = true} loc("x")) -> (tensor<2xf32> {jax.result_info = "result", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32> loc(#loc3)
    %1 = stablehlo.sine %0 {mhlo.frontend_attributes = {a = "b"}} : tensor<2xf32> loc(callsite(#loc2 at #loc3))
    return %1 : tensor<2xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("f.py":5:11 to :21)
#loc3 = loc("jit(f)/sin"(#loc2))
"""
    module = stablehlo.parse(text)
    assert module.attributes["num_partitions"] == 2
    assert [i.opcode for i in module.entry_computation.instructions] == \
        [Opcode.PARAMETER, Opcode.SIN]


def test_slice_pad_iota_and_tuple_forms():
    body = """    %0 = stablehlo.slice %arg0 [1:4:2, 0:2] : (tensor<4x3xf32>) -> tensor<2x2xf32>
    %c = stablehlo.constant dense<9.0> : tensor<f32>
    %1 = stablehlo.pad %0, %c, low = [0, 1], high = [1, 0], interior = [0, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<3x4xf32>
    %2 = stablehlo.iota dim = 0 : tensor<3xui8>
    %3 = stablehlo.tuple %2, %c : tuple<tensor<3xui8>, tensor<f32>>
    %4 = stablehlo.get_tuple_element %3[0] : (tuple<tensor<3xui8>, tensor<f32>>) -> tensor<3xui8>
    %5:2 = stablehlo.optimization_barrier %4, %c : tensor<3xui8>, tensor<f32>
    return %1, %5#0 : tensor<3x4xf32>, tensor<3xui8>"""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    padded, iota = run(body, x, signature="%arg0: tensor<4x3xf32>",
                       results="tensor<3x4xf32>, tensor<3xui8>")
    np.testing.assert_array_equal(padded, [[9, 3, 9, 4], [9, 9, 9, 10], [9, 9, 9, 9]])
    np.testing.assert_array_equal(iota, np.arange(3, dtype=np.uint8))


def test_is_stablehlo():
    assert stablehlo.is_stablehlo("module @jit_f {\n}")
    assert stablehlo.is_stablehlo("#loc1 = loc(\"x\")\nmodule @m {}")
    assert stablehlo.is_stablehlo(b"func.func @main() {}")
    assert not stablehlo.is_stablehlo("HloModule m\n\nENTRY e { ROOT c = f32[] constant(1) }")
