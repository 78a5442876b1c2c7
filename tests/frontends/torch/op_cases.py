"""Tiny graphs for the lowering table: one or more per ATen op, each an FX graph made
by `make_fx` (no decompositions, so the op reaches the lowering as itself).

`CASES` maps a case name to (function of tensors, input builder, options); the
builder runs under a fixed seed. Backward ops get inputs consistent with their
forward (indices from the pool, mean and rstd from the norm...).
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def f(*shape, low=None, high=None):
    """A float32 tensor: normal, or uniform in [low, high)."""
    if low is not None:
        return torch.rand(*shape) * (high - low) + low
    return torch.randn(*shape)


def i(high, *shape, low=0):
    return torch.randint(low, high, shape)


def b(*shape):
    return torch.rand(*shape) > 0.5


CASES: dict[str, tuple] = {}


def case(name: str, fn, inputs, **options):
    assert name not in CASES, name
    CASES[name] = (fn, inputs, options)


# -- elementwise unary ---------------------------------------------------------------------
for _name, _low, _high in [
    ("abs", None, None), ("neg", None, None), ("exp", None, None), ("expm1", None, None),
    ("log", 0.1, 3.0), ("log1p", -0.5, 3.0), ("sqrt", 0.0, 4.0), ("rsqrt", 0.1, 4.0),
    ("sin", None, None), ("cos", None, None), ("tan", -1.0, 1.0), ("tanh", None, None),
    ("sigmoid", None, None), ("erf", None, None), ("sign", None, None), ("atan", None, None),
    ("asin", -0.9, 0.9), ("acos", -0.9, 0.9), ("sinh", None, None), ("cosh", None, None),
    ("asinh", None, None), ("acosh", 1.1, 3.0), ("atanh", -0.9, 0.9), ("floor", -3.0, 3.0),
    ("ceil", -3.0, 3.0), ("round", -3.0, 3.0), ("trunc", -3.0, 3.0),
    ("reciprocal", 0.5, 2.0), ("log2", 0.1, 3.0), ("log10", 0.1, 3.0), ("exp2", None, None),
    ("relu", None, None), ("silu", None, None), ("isnan", None, None), ("isinf", None, None),
    ("isfinite", None, None),
]:
    case(_name, getattr(aten, _name).default,
         lambda lo=_low, hi=_high: [f(3, 4, low=lo, high=hi)])
case("isnan_nan", aten.isnan.default, lambda: [torch.tensor([1.0, float("nan"), float("inf")])])
case("isinf_inf", aten.isinf.default, lambda: [torch.tensor([1.0, float("nan"), -float("inf")])])
case("round_half_even", aten.round.default, lambda: [torch.tensor([0.5, 1.5, 2.5, -0.5])])
case("floor_int", aten.floor.default, lambda: [i(9, 5)])
case("bitwise_not", aten.bitwise_not.default, lambda: [i(100, 5)])
case("logical_not", aten.logical_not.default, lambda: [f(6)])
case("hardtanh", aten.hardtanh.default, lambda: [f(8) * 2, -0.5, 1.5])
case("leaky_relu", aten.leaky_relu.default, lambda: [f(8), 0.2])
case("gelu", aten.gelu.default, lambda: [f(3, 4)])
case("gelu_tanh", lambda x: aten.gelu.default(x, approximate="tanh"), lambda: [f(3, 4)])
case("threshold", aten.threshold.default, lambda: [f(8), 0.1, 20.0])

# -- binary arithmetic ---------------------------------------------------------------------
case("add_broadcast", aten.add.Tensor, lambda: [f(3, 4), f(4)])
case("add_alpha", lambda x, y: aten.add.Tensor(x, y, alpha=0.5), lambda: [f(3, 4), f(3, 1)])
case("add_scalar", aten.add.Tensor, lambda: [f(3), 2.5])
case("add_int_float", aten.add.Tensor, lambda: [i(9, 4), f(4)])
case("add_bool", aten.add.Tensor, lambda: [b(5), b(5)])
case("add_Scalar", aten.add.Scalar, lambda: [f(3), 2])
case("sub", aten.sub.Tensor, lambda: [f(2, 3), f(2, 3)])
case("sub_alpha", lambda x, y: aten.sub.Tensor(x, y, alpha=2), lambda: [i(9, 4), i(9, 4)])
case("rsub", aten.rsub.Scalar, lambda: [f(4), 1.0])
case("mul", aten.mul.Tensor, lambda: [f(2, 3), f(1, 3)])
case("mul_scalar", aten.mul.Tensor, lambda: [i(9, 3), 3])
case("mul_bool", aten.mul.Tensor, lambda: [b(4), b(4)])
case("div", aten.div.Tensor, lambda: [f(3, 4), f(3, 4, low=0.5, high=2.0)])
case("div_int", aten.div.Tensor, lambda: [i(9, 4), i(5, 4, low=1)])
case("div_floor", lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode="floor"),
     lambda: [f(6) * 5, f(6, low=0.5, high=2.0)])
case("div_floor_int", lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode="floor"),
     lambda: [torch.tensor([7, -7, 7, -7, 6]), torch.tensor([2, 2, -2, -2, 3])])
case("div_trunc_int", lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode="trunc"),
     lambda: [torch.tensor([7, -7, 7, -7]), torch.tensor([2, 2, -2, -2])])
case("div_trunc", lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode="trunc"),
     lambda: [f(6) * 5, f(6, low=0.5, high=2.0)])
case("floor_divide", aten.floor_divide.default,
     lambda: [torch.tensor([7, -7, 7, -7]), torch.tensor([2, 2, -2, -2])])
case("remainder", aten.remainder.Tensor,
     lambda: [torch.tensor([7.0, -7.0, 7.0, -7.5]), torch.tensor([2.0, 2.0, -2.0, -2.0])])
case("remainder_int", aten.remainder.Scalar, lambda: [torch.tensor([7, -7, 5, -4]), 3])
case("fmod", aten.fmod.Tensor,
     lambda: [torch.tensor([7.0, -7.0, 7.0, -7.5]), torch.tensor([2.0, 2.0, -2.0, -2.0])])
case("pow_2", aten.pow.Tensor_Scalar, lambda: [f(5), 2])
case("pow_half", aten.pow.Tensor_Scalar, lambda: [f(5, low=0.1, high=2.0), 0.5])
case("pow_3", aten.pow.Tensor_Scalar, lambda: [f(5, low=0.1, high=2.0), 3.0])
case("pow_tensor", aten.pow.Tensor_Tensor, lambda: [f(5, low=0.1, high=2.0), f(5)])
case("pow_scalar_base", aten.pow.Scalar, lambda: [2.0, f(5)])
case("maximum", aten.maximum.default, lambda: [f(3, 4), f(4)])
case("minimum", aten.minimum.default, lambda: [f(3, 4), f(3, 4)])
case("atan2", aten.atan2.default, lambda: [f(6), f(6)])
case("bitwise_and", aten.bitwise_and.Tensor, lambda: [i(64, 5), i(64, 5)])
case("bitwise_or", aten.bitwise_or.Tensor, lambda: [i(64, 5), i(64, 5)])
case("bitwise_xor", aten.bitwise_xor.Tensor, lambda: [i(64, 5), i(64, 5)])
case("logical_and", aten.logical_and.default, lambda: [f(5), b(5)])
case("logical_or", aten.logical_or.default, lambda: [b(5), b(5)])
case("logical_xor", aten.logical_xor.default, lambda: [b(5), i(2, 5)])

# -- comparisons and selection -------------------------------------------------------------
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    case(_name, getattr(aten, _name).Tensor, lambda: [i(3, 4, 3).float(), i(3, 3).float()])
    case(f"{_name}_scalar", getattr(aten, _name).Scalar, lambda: [i(3, 6), 1])
case("lt_int_float", aten.lt.Scalar, lambda: [i(3, 6), 0.5])
case("where", aten.where.self, lambda: [b(3, 4), f(3, 4), f(4)])
case("where_scalar", aten.where.ScalarOther, lambda: [b(3, 4), f(3, 4), 0.0])
case("masked_fill", aten.masked_fill.Scalar, lambda: [f(3, 4), b(3, 4), -1.0])
case("masked_fill_tensor", aten.masked_fill.Tensor, lambda: [f(3, 4), b(4), torch.tensor(7.0)])
case("clamp", aten.clamp.default, lambda: [f(8), -0.5, 0.5])
case("clamp_min_only", aten.clamp.default, lambda: [f(8), -0.5])
case("clamp_tensor", aten.clamp.Tensor, lambda: [f(8), f(8) - 1, f(8) + 1])
case("clamp_min", aten.clamp_min.default, lambda: [f(8), 0.1])
case("clamp_max", aten.clamp_max.default, lambda: [f(8), 0.1])
case("copy", aten.copy.default, lambda: [f(3, 4), i(9, 4)])
case("fill", aten.fill.Scalar, lambda: [f(3, 4), 2.0])

# -- activation backward -------------------------------------------------------------------
case("gelu_backward", aten.gelu_backward.default, lambda: [f(3, 4), f(3, 4)])
case("gelu_backward_tanh", lambda g, x: aten.gelu_backward.default(g, x, approximate="tanh"),
     lambda: [f(3, 4), f(3, 4)])
case("threshold_backward", aten.threshold_backward.default, lambda: [f(8), f(8), 0.0])
case("sigmoid_backward", aten.sigmoid_backward.default,
     lambda: [f(8), torch.sigmoid(f(8))])
case("tanh_backward", aten.tanh_backward.default, lambda: [f(8), torch.tanh(f(8))])
case("silu_backward", aten.silu_backward.default, lambda: [f(8), f(8)])
case("leaky_relu_backward", aten.leaky_relu_backward.default,
     lambda: [f(8), f(8), 0.1, False])
case("hardtanh_backward", aten.hardtanh_backward.default, lambda: [f(8), f(8), -0.5, 0.5])
case("native_dropout_backward", aten.native_dropout_backward.default,
     lambda: [f(8), b(8), 2.0])

# -- views and movement --------------------------------------------------------------------
for _name in ("alias", "detach", "clone", "lift_fresh_copy", "alias_copy", "detach_copy"):
    case(_name, getattr(aten, _name).default, lambda: [f(3, 4)])
case("_to_copy", lambda x: aten._to_copy.default(x, dtype=torch.int32), lambda: [f(3, 4) * 4])
case("_to_copy_bool", lambda x: aten._to_copy.default(x, dtype=torch.bool), lambda: [i(3, 5)])
case("_to_copy_double", lambda x: aten._to_copy.default(x, dtype=torch.float64),
     lambda: [f(5)])
case("view", lambda x: aten.view.default(x, [4, -1]), lambda: [f(2, 6)])
case("_unsafe_view", lambda x: aten._unsafe_view.default(x, [12]), lambda: [f(2, 6)])
case("unsqueeze", lambda x: aten.unsqueeze.default(x, -1), lambda: [f(2, 3)])
case("squeeze", aten.squeeze.default, lambda: [f(2, 1, 3, 1)])
case("squeeze_dim", lambda x: aten.squeeze.dim(x, 1), lambda: [f(2, 1, 3)])
case("squeeze_dims", lambda x: aten.squeeze.dims(x, [1, 3]), lambda: [f(2, 1, 3, 1)])
case("view_copy", lambda x: aten.view_copy.default(x, [3, 2]), lambda: [f(6)])
case("_reshape_alias", lambda x: aten._reshape_alias.default(x, [3, 2], [2, 1]),
     lambda: [f(6)])
case("view_dtype", lambda x: aten.view.dtype(x, torch.int32), lambda: [f(4)])
case("permute", lambda x: aten.permute.default(x, [2, 0, 1]), lambda: [f(2, 3, 4)])
case("t", aten.t.default, lambda: [f(2, 3)])
case("transpose", lambda x: aten.transpose.int(x, 0, -1), lambda: [f(2, 3, 4)])
case("expand", lambda x: aten.expand.default(x, [2, 3, 4]), lambda: [f(3, 1)])
case("expand_copy", lambda x: aten.expand_copy.default(x, [2, 4]), lambda: [f(4)])
case("slice", lambda x: aten.slice.Tensor(x, 1, 1, -1, 2), lambda: [f(3, 8)])
case("slice_open", lambda x: aten.slice.Tensor(x, 0, -2, 2 ** 63 - 1), lambda: [f(5, 2)])
case("select", lambda x: aten.select.int(x, 1, -1), lambda: [f(3, 4)])
case("split", lambda x: aten.split.Tensor(x, 2, 1), lambda: [f(2, 5)])
case("split_with_sizes", lambda x: aten.split_with_sizes.default(x, [1, 3], 0),
     lambda: [f(4, 2)])
case("unbind", lambda x: aten.unbind.int(x, 1), lambda: [f(2, 3)])
case("slice_scatter", lambda x, s: aten.slice_scatter.default(x, s, 1, 1, 6, 2),
     lambda: [f(3, 7), f(3, 3)])
case("select_scatter", lambda x, s: aten.select_scatter.default(x, s, 0, 1),
     lambda: [f(3, 4), f(4)])
case("cat", lambda x, y: aten.cat.default([x, y], 1), lambda: [f(2, 3), f(2, 2)])
case("cat_promote", lambda x, y: aten.cat.default([x, y]), lambda: [f(2, 3), i(5, 1, 3)])
case("stack", lambda x, y: aten.stack.default([x, y], -1), lambda: [f(2, 3), f(2, 3)])
case("flip", lambda x: aten.flip.default(x, [0, -1]), lambda: [f(3, 4)])
case("roll", lambda x: aten.roll.default(x, [1, -2], [0, 1]), lambda: [f(3, 4)])
case("roll_flat", lambda x: aten.roll.default(x, [2]), lambda: [f(3, 4)])
case("repeat", lambda x: aten.repeat.default(x, [2, 1, 3]), lambda: [f(2, 3)])
case("constant_pad_nd", lambda x: aten.constant_pad_nd.default(x, [1, 2, 0, 1], 0.5),
     lambda: [f(2, 3)])
case("constant_pad_nd_negative", lambda x: aten.constant_pad_nd.default(x, [-1, 2]),
     lambda: [f(2, 4)])
case("tril", lambda x: aten.tril.default(x, 1), lambda: [f(4, 5)])
case("triu", lambda x: aten.triu.default(x, -1), lambda: [f(2, 4, 5)])

# -- creation ------------------------------------------------------------------------------
case("full", lambda x: x + aten.full.default([3, 4], 2.5), lambda: [f(3, 4)])
case("full_like", lambda x: aten.full_like.default(x, 7), lambda: [i(4, 3)])
case("new_full", lambda x: aten.new_full.default(x, [2], 3.0), lambda: [f(3)])
case("scalar_tensor", lambda x: x * aten.scalar_tensor.default(3.0), lambda: [f(3)])
case("zeros", lambda x: x + aten.zeros.default([3]), lambda: [f(3)])
case("zeros_like", aten.zeros_like.default, lambda: [f(3)])
case("new_zeros", lambda x: aten.new_zeros.default(x, [2, 2]), lambda: [i(3, 3)])
case("ones", lambda x: x + aten.ones.default([3]), lambda: [f(3)])
case("ones_like", aten.ones_like.default, lambda: [f(3)])
case("new_ones", lambda x: aten.new_ones.default(x, [2, 2]), lambda: [f(3)])
for _name, _fn in [("empty", lambda x: aten.empty.memory_format([2, 3])),
                   ("empty_like", aten.empty_like.default),
                   ("new_empty", lambda x: aten.new_empty.default(x, [4])),
                   ("empty_strided", lambda x: aten.empty_strided.default([2, 3], [3, 1])),
                   ("new_empty_strided",
                    lambda x: aten.new_empty_strided.default(x, [2, 3], [3, 1])),
                   ("empty_permuted", lambda x: aten.empty_permuted.default([2, 3], [1, 0]))]:
    case(_name, _fn, lambda: [f(3)], values=False)
case("arange", lambda x: x + aten.arange.default(4), lambda: [f(4)])
case("arange_start", lambda x: aten.arange.start(2, 7, dtype=torch.int64), lambda: [f(1)])
case("arange_step", lambda x: aten.arange.start_step(0.5, 3.0, 0.5), lambda: [f(1)])

# -- reductions ----------------------------------------------------------------------------
case("sum", aten.sum.default, lambda: [f(3, 4)])
case("sum_dim", lambda x: aten.sum.dim_IntList(x, [0, 2], True), lambda: [f(2, 3, 4)])
case("sum_dtype", lambda x: aten.sum.dim_IntList(x, [1], dtype=torch.float64),
     lambda: [f(2, 3)])
case("sum_bool", lambda x: aten.sum.dim_IntList(x, [-1]), lambda: [b(3, 5)])
case("mean", aten.mean.default, lambda: [f(3, 4)])
case("mean_dim", lambda x: aten.mean.dim(x, [-1], True), lambda: [f(3, 4)])
case("prod", aten.prod.default, lambda: [f(5, low=0.5, high=1.5)])
case("prod_dim", lambda x: aten.prod.dim_int(x, 1), lambda: [f(3, 4, low=0.5, high=1.5)])
case("amax", lambda x: aten.amax.default(x, [1]), lambda: [f(3, 4)])
case("amin", lambda x: aten.amin.default(x, [0, 1], True), lambda: [f(3, 4)])
case("amax_int", lambda x: aten.amax.default(x, [1]), lambda: [i(50, 3, 4)])
case("any", aten.any.default, lambda: [b(3, 4)])
case("any_dim", lambda x: aten.any.dim(x, 1), lambda: [f(3, 4) > 1])
case("all_dims", lambda x: aten.all.dims(x, [0]), lambda: [b(3, 4)])
case("max", aten.max.default, lambda: [f(3, 4)])
case("max_dim", lambda x: aten.max.dim(x, 1, True), lambda: [i(3, 4, 5).float()])
case("min_dim", lambda x: aten.min.dim(x, 0), lambda: [i(3, 4, 5).float()])
case("argmax", lambda x: aten.argmax.default(x, 1), lambda: [i(3, 4, 5).float()])
case("argmin", aten.argmin.default, lambda: [f(3, 4)])
case("var", lambda x: aten.var.correction(x, [1], correction=1), lambda: [f(3, 5)])
case("var_all", aten.var.default, lambda: [f(3, 5)])
case("var_dim", lambda x: aten.var.dim(x, [0], False, True), lambda: [f(3, 5)])
case("std", lambda x: aten.std.correction(x, [1], correction=0, keepdim=True),
     lambda: [f(3, 5)])
case("var_mean", lambda x: aten.var_mean.correction(x, [1], correction=1), lambda: [f(3, 5)])
case("std_mean", lambda x: aten.std_mean.correction(x, [0]), lambda: [f(3, 5)])
case("logsumexp", lambda x: aten.logsumexp.default(x, [1]), lambda: [f(3, 5) * 30])
case("cumsum", lambda x: aten.cumsum.default(x, 1), lambda: [f(3, 5)])
case("cumsum_int", lambda x: aten.cumsum.default(x, 0), lambda: [i(9, 6)])
case("cumprod", lambda x: aten.cumprod.default(x, 1), lambda: [f(3, 5, low=0.5, high=1.5)])

# -- softmax, norms, losses ----------------------------------------------------------------
case("_softmax", lambda x: aten._softmax.default(x, -1, False), lambda: [f(3, 5) * 20])
case("_log_softmax", lambda x: aten._log_softmax.default(x, 1, False), lambda: [f(3, 5) * 20])
case("_softmax_backward_data",
     lambda g, y: aten._softmax_backward_data.default(g, y, 1, torch.float32),
     lambda: [f(3, 5), torch.softmax(f(3, 5), 1)])
case("_log_softmax_backward_data",
     lambda g, y: aten._log_softmax_backward_data.default(g, y, 1, torch.float32),
     lambda: [f(3, 5), torch.log_softmax(f(3, 5), 1)])
case("native_layer_norm",
     lambda x, w, bias: aten.native_layer_norm.default(x, [4], w, bias, 1e-5),
     lambda: [f(2, 3, 4), f(4), f(4)])
case("native_layer_norm_2d",
     lambda x: aten.native_layer_norm.default(x, [3, 4], None, None, 1e-5),
     lambda: [f(2, 3, 4)])


def _layer_norm_backward_inputs():
    x, w, bias = f(2, 3, 4), f(4), f(4)
    _, mean, rstd = aten.native_layer_norm.default(x, [4], w, bias, 1e-5)
    return [f(2, 3, 4), x, mean, rstd, w, bias]


case("native_layer_norm_backward",
     lambda g, x, mean, rstd, w, bias: aten.native_layer_norm_backward.default(
         g, x, [4], mean, rstd, w, bias, [True, True, True]),
     _layer_norm_backward_inputs)
case("native_layer_norm_backward_input_only",
     lambda g, x, mean, rstd, w, bias: aten.native_layer_norm_backward.default(
         g, x, [4], mean, rstd, w, bias, [True, False, False]),
     _layer_norm_backward_inputs)


def _bn_inputs():
    return [f(4, 3, 2, 2) * 2 + 1, f(3), f(3), f(3), f(3, low=0.5, high=2.0)]


case("batch_norm_functional_train",
     lambda x, w, bias, rm, rv: aten._native_batch_norm_legit_functional.default(
         x, w, bias, rm, rv, True, 0.1, 1e-5), _bn_inputs)
case("batch_norm_functional_eval",
     lambda x, w, bias, rm, rv: aten._native_batch_norm_legit_functional.default(
         x, w, bias, rm, rv, False, 0.1, 1e-5), _bn_inputs, skip_empty=True)
case("batch_norm_no_training",
     lambda x, w, bias, rm, rv: aten._native_batch_norm_legit_no_training.default(
         x, w, bias, rm, rv, 0.1, 1e-5), _bn_inputs, skip_empty=True)
case("batch_norm_no_stats",
     lambda x, w, bias: aten._native_batch_norm_legit.no_stats(x, w, bias, True, 0.1, 1e-5),
     lambda: _bn_inputs()[:3])
case("batch_norm_legit_eval",
     lambda x, w, bias, rm, rv: aten._native_batch_norm_legit.default(
         x, w, bias, rm, rv, False, 0.1, 1e-5), _bn_inputs, skip_empty=True)
case("native_batch_norm_eval",
     lambda x, w, bias, rm, rv: aten.native_batch_norm.default(x, w, bias, rm, rv, False, 0.1,
                                                                1e-5),
     _bn_inputs, skip_empty=True)


def _bn_backward_inputs(train: bool):
    def make():
        x, w, bias, rm, rv = _bn_inputs()
        _, mean, invstd, _, _ = aten._native_batch_norm_legit_functional.default(
            x, w, bias, rm, rv, True, 0.1, 1e-5)
        return [f(4, 3, 2, 2), x, w, rm, rv, mean, invstd]
    return make


for _train in (True, False):
    case(f"native_batch_norm_backward_{'train' if _train else 'eval'}",
         lambda g, x, w, rm, rv, mean, invstd, t=_train: aten.native_batch_norm_backward.default(
             g, x, w, rm, rv, mean, invstd, t, 1e-5, [True, True, True]),
         _bn_backward_inputs(_train))

for _reduction in (0, 1, 2):
    case(f"nll_loss_forward_{_reduction}",
         lambda x, t, r=_reduction: aten.nll_loss_forward.default(x, t, None, r, -100),
         lambda: [torch.log_softmax(f(5, 4), 1), i(4, 5)])
case("nll_loss_forward_weighted_ignore",
     lambda x, t, w: aten.nll_loss_forward.default(x, t, w, 1, 2),
     lambda: [torch.log_softmax(f(6, 4), 1), torch.tensor([0, 1, 2, 3, 2, 1]), f(4, low=0.5,
                                                                                 high=2.0)])
case("nll_loss_forward_1d",
     lambda x, t: aten.nll_loss_forward.default(x, t, None, 1, -100),
     lambda: [torch.log_softmax(f(4), 0), torch.tensor(2)])


def _nll_backward_inputs(reduction: int, weighted: bool):
    def make():
        x, t = torch.log_softmax(f(6, 4), 1), torch.tensor([0, 1, 2, 3, 2, 1])
        w = f(4, low=0.5, high=2.0) if weighted else None
        _, total = aten.nll_loss_forward.default(x, t, w, reduction, 2)
        grad = f(6) if reduction == 0 else f(())
        return [grad, x, t, w, total]
    return make


for _reduction in (0, 1, 2):
    case(f"nll_loss_backward_{_reduction}",
         lambda g, x, t, w, total, r=_reduction: aten.nll_loss_backward.default(
             g, x, t, w, r, 2, total), _nll_backward_inputs(_reduction, _reduction == 1))

# -- matrix products, convolution, pooling -------------------------------------------------
case("mm", aten.mm.default, lambda: [f(3, 4), f(4, 5)])
case("addmm", aten.addmm.default, lambda: [f(5), f(3, 4), f(4, 5)])
case("addmm_scaled", lambda c, a, m: aten.addmm.default(c, a, m, beta=0.5, alpha=2.0),
     lambda: [f(3, 5), f(3, 4), f(4, 5)])
case("bmm", aten.bmm.default, lambda: [f(2, 3, 4), f(2, 4, 5)])
case("baddbmm", lambda c, a, m: aten.baddbmm.default(c, a, m, alpha=0.5),
     lambda: [f(2, 3, 5), f(2, 3, 4), f(2, 4, 5)])
case("dot", aten.dot.default, lambda: [f(6), f(6)])
case("vdot", aten.vdot.default, lambda: [f(6), f(6)])
case("mv", aten.mv.default, lambda: [f(3, 6), f(6)])

_CONVS = {  # name: (input shape, weight shape, stride, padding, dilation, groups)
    "plain": ((2, 3, 7, 7), (4, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1),
    "strided_padded": ((2, 2, 8, 7), (3, 2, 3, 2), [2, 1], [1, 1], [1, 1], 1),
    "dilated_grouped": ((1, 4, 9, 9), (6, 2, 3, 3), [2, 2], [2, 1], [2, 1], 2),
    "depthwise": ((2, 3, 6, 6), (3, 1, 3, 3), [1, 1], [1, 1], [1, 1], 3),
    "1d": ((2, 3, 10), (4, 3, 3), [2], [1], [1], 1),
}
for _name, (_x, _w, _s, _p, _d, _g) in _CONVS.items():
    case(f"convolution_{_name}",
         lambda x, w, bias, s=_s, p=_p, d=_d, g=_g: aten.convolution.default(
             x, w, bias, s, p, d, False, [0] * len(s), g),
         lambda x=_x, w=_w: [f(*x), f(*w), f(w[0])], atol=1e-4)
    case(f"convolution_backward_{_name}",
         lambda go, x, w, s=_s, p=_p, d=_d, g=_g: aten.convolution_backward.default(
             go, x, w, [w.shape[0]], s, p, d, False, [0] * len(s), g, [True, True, True]),
         lambda x=_x, w=_w, s=_s, p=_p, d=_d, g=_g: [
             f(*aten.convolution.default(torch.zeros(x), torch.zeros(w), None, s, p, d, False,
                                         [0] * len(s), g).shape), f(*x), f(*w)], atol=1e-4)
case("convolution_transposed",
     lambda x, w, bias: aten.convolution.default(x, w, bias, [2, 2], [1, 0], [1, 1], True,
                                                 [1, 0], 1),
     lambda: [f(2, 3, 4, 5), f(3, 2, 3, 3), f(2)], atol=1e-4)
case("convolution_transposed_grouped",
     lambda x, w: aten.convolution.default(x, w, None, [1, 2], [0, 1], [2, 1], True, [0, 1], 2),
     lambda: [f(1, 4, 5, 5), f(4, 3, 2, 3)], atol=1e-4)

_POOLS = {  # name: (input shape, kernel, stride, padding, dilation, ceil_mode)
    "plain": ((2, 3, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False),
    "overlap_padded": ((1, 2, 7, 6), [3, 3], [2, 1], [1, 1], [1, 1], False),
    "dilated_ceil": ((2, 1, 9, 8), [2, 3], [2, 2], [1, 0], [2, 1], True),
    "3d_input": ((2, 5, 5), [2, 2], [], [0, 0], [1, 1], True),
}
for _name, (_x, _k, _s, _p, _d, _c) in _POOLS.items():
    case(f"max_pool2d_with_indices_{_name}",
         lambda x, k=_k, s=_s, p=_p, d=_d, c=_c: aten.max_pool2d_with_indices.default(
             x, k, s, p, d, c), lambda x=_x: [f(*x)])

    def _max_pool_backward_inputs(x=_x, k=_k, s=_s, p=_p, d=_d, c=_c):
        x = i(4, *x).float()  # ties: the first maximum wins
        out, indices = aten.max_pool2d_with_indices.default(x, k, s, p, d, c)
        return [f(*out.shape), x, indices]

    case(f"max_pool2d_with_indices_backward_{_name}",
         lambda g, x, ix, k=_k, s=_s, p=_p, d=_d, c=_c:
         aten.max_pool2d_with_indices_backward.default(g, x, k, s, p, d, c, ix),
         _max_pool_backward_inputs)

_AVG_POOLS = {  # name: (input shape, kernel, stride, padding, ceil_mode, include_pad, divisor)
    "plain": ((2, 3, 6, 6), [2, 2], [2, 2], [0, 0], False, True, None),
    "padded_exclusive": ((1, 2, 7, 6), [3, 3], [2, 1], [1, 1], False, False, None),
    "ceil_inclusive": ((1, 2, 7, 6), [3, 2], [2, 2], [1, 1], True, True, None),
    "ceil_exclusive": ((1, 1, 8, 5), [3, 2], [2, 2], [1, 0], True, False, None),
    "divisor": ((2, 6, 6), [3, 3], [3, 3], [0, 0], False, True, 5),
}
for _name, (_x, _k, _s, _p, _c, _inc, _div) in _AVG_POOLS.items():
    case(f"avg_pool2d_{_name}",
         lambda x, k=_k, s=_s, p=_p, c=_c, inc=_inc, div=_div: aten.avg_pool2d.default(
             x, k, s, p, c, inc, div), lambda x=_x: [f(*x)])
    case(f"avg_pool2d_backward_{_name}",
         lambda g, x, k=_k, s=_s, p=_p, c=_c, inc=_inc, div=_div:
         aten.avg_pool2d_backward.default(g, x, k, s, p, c, inc, div),
         lambda x=_x, k=_k, s=_s, p=_p, c=_c, inc=_inc, div=_div: [
             f(*aten.avg_pool2d.default(torch.zeros(x), k, s, p, c, inc, div).shape), f(*x)])
case("_adaptive_avg_pool2d", lambda x: aten._adaptive_avg_pool2d.default(x, [2, 3]),
     lambda: [f(2, 3, 4, 6)])
case("_adaptive_avg_pool2d_backward", aten._adaptive_avg_pool2d_backward.default,
     lambda: [f(2, 3, 1, 1), f(2, 3, 4, 6)])

# -- dropout (deterministic settings), attention -------------------------------------------
case("native_dropout_eval", lambda x: aten.native_dropout.default(x, 0.5, False),
     lambda: [f(3, 4)])
case("native_dropout_p0", lambda x: aten.native_dropout.default(x, 0.0, True),
     lambda: [f(3, 4)])
case("native_dropout_p1", lambda x: aten.native_dropout.default(x, 1.0, True),
     lambda: [f(3, 4)])


def _attention_inputs(masked: bool):
    def make():
        q, k, v = f(2, 2, 5, 4), f(2, 2, 6, 4), f(2, 2, 6, 4)
        mask = f(5, 6) if masked else None
        return [q, k, v, mask]
    return make


for _causal, _masked in ((False, False), (True, False), (False, True)):
    _suffix = "_causal" if _causal else "_masked" if _masked else ""
    case(f"flash_attention{_suffix}",
         lambda q, k, v, m, c=_causal: aten._scaled_dot_product_flash_attention_for_cpu.default(
             q, k, v, 0.0, c, attn_mask=m), _attention_inputs(_masked), atol=1e-5)

    def _attention_backward_inputs(c=_causal, masked=_masked):
        q, k, v, m = _attention_inputs(masked)()
        out, lse = aten._scaled_dot_product_flash_attention_for_cpu.default(
            q, k, v, 0.0, c, attn_mask=m)
        return [f(*out.shape), q, k, v, out, lse, m]

    case(f"flash_attention_backward{_suffix}",
         lambda g, q, k, v, o, lse, m, c=_causal:
         aten._scaled_dot_product_flash_attention_for_cpu_backward.default(
             g, q, k, v, o, lse, 0.0, c, attn_mask=m), _attention_backward_inputs, atol=1e-5)

# -- indexing ------------------------------------------------------------------------------
case("gather", lambda x, ix: aten.gather.default(x, 1, ix), lambda: [f(3, 5), i(5, 3, 2)])
case("gather_dim0", lambda x, ix: aten.gather.default(x, 0, ix), lambda: [f(3, 4), i(3, 2, 4)])
case("scatter_src", lambda x, ix, s: aten.scatter.src(x, 1, ix, s),
     lambda: [f(3, 5), torch.tensor([[0, 1], [2, 3], [4, 0]]), f(3, 2)])
case("scatter_value", lambda x, ix: aten.scatter.value(x, 0, ix, 9.0),
     lambda: [f(3, 4), torch.tensor([[0, 1, 2, 0]])])
case("scatter_add", lambda x, ix, s: aten.scatter_add.default(x, 1, ix, s),
     lambda: [f(3, 5), i(5, 3, 4), f(3, 4)])
case("scatter_reduce_sum", lambda x, ix, s: aten.scatter_reduce.two(x, 0, ix, s, "sum"),
     lambda: [f(4), i(4, 7), f(7)])
case("scatter_reduce_amax", lambda x, ix, s: aten.scatter_reduce.two(x, 0, ix, s, "amax"),
     lambda: [f(4), i(4, 7), f(7)])
case("index_select", lambda x, ix: aten.index_select.default(x, 1, ix),
     lambda: [f(3, 5), torch.tensor([4, 0, 2])])
case("embedding", aten.embedding.default, lambda: [f(10, 3), i(10, 2, 4)])
case("embedding_dense_backward",
     lambda g, ix: aten.embedding_dense_backward.default(g, ix, 10, -1, False),
     lambda: [f(2, 4, 3), i(10, 2, 4)])
case("embedding_dense_backward_padding",
     lambda g, ix: aten.embedding_dense_backward.default(g, ix, 10, 3, False),
     lambda: [f(2, 4, 3), i(5, 2, 4)])
case("index", lambda x, ix: aten.index.Tensor(x, [ix]), lambda: [f(5, 3), torch.tensor([4, -1, 0])])
case("index_two", lambda x, a, c: aten.index.Tensor(x, [None, a, c]),
     lambda: [f(2, 5, 4, 3), i(5, 3, 1), i(4, 2)])
case("index_apart", lambda x, a, c: aten.index.Tensor(x, [a, None, c]),
     lambda: [f(5, 2, 4), i(5, 3), i(4, 3)])
case("index_put", lambda x, ix, v: aten.index_put.default(x, [ix], v),
     lambda: [f(5, 3), torch.tensor([4, 0]), f(2, 3)])
case("index_put_accumulate", lambda x, a, v: aten.index_put.default(x, [None, a], v, True),
     lambda: [f(2, 5), torch.tensor([1, 1, 3]), f(3)])
