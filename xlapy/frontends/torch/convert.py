"""An FX graph of ATen operations (what AOTAutograd hands a compiler) as an HLO module.

`lower_graph(gm)` walks `gm.graph.nodes` in order: each placeholder becomes an
entry parameter, each ATen call the HLO its lowering (registry.LOWERINGS)
builds, and the output node the root tuple. Every node carries PyTorch's own
result metadata (`node.meta["val"]`, a FakeTensor), so shapes and dtypes are
never re-derived here: elementwise operands are broadcast to the result's
shape, and each lowering's result is converted to the result's dtype and
checked against its shape (a lowering that disagrees with PyTorch is an error,
never a wrong result).

A graph that cannot be lowered (an op with no lowering, symbolic shapes, a
lowering that refuses its arguments) raises `Unsupported` naming the op; the
backend then runs that graph eagerly.

`GraphLowering` is also the helper object every lowering receives as `g`:
constants, broadcasting, conversions, reductions and random bits.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from xlapy.errors import XlapyError
from xlapy.frontends.torch.dtypes import primitive_type
from xlapy.frontends.torch.registry import Unsupported, lowering_for
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

H = HloInstruction

_PYTHON_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.truediv,
               operator.mod, operator.neg, operator.pow, operator.eq, operator.ne, operator.lt,
               operator.le, operator.gt, operator.ge}
"""Python arithmetic on shape values that Dynamo leaves in graphs; evaluated here."""


@dataclass
class LoweredGraph:
    """An FX graph as an HLO module, and how to call it.

    `outputs` has one entry per graph output: an int, the index of the root tuple's
    element that holds it, or ("value", v) for a non-tensor output (None, a number).
    `needs_seed`: the module's last parameter is an s32[2] random key (dropout).

    Layouts: a tensor PyTorch lays out as a permutation of a contiguous one (a
    transposed weight gradient, a saved activation) crosses in that order, so neither
    side copies it: `input_perms[i]` (or None) is the order of input i's dimensions in
    memory, outermost first; the module's parameter holds `tensor.permute(perm)` and
    transposes it back. `output_perms[k]` is the same for root element k: the module
    returns the permuted array and the tensor is its `.permute` back, with PyTorch's
    strides."""

    module: HloModule
    input_count: int
    outputs: list = field(default_factory=list)
    needs_seed: bool = False
    out_dtypes: list = field(default_factory=list)  # torch dtype of each root element
    input_perms: list = field(default_factory=list)
    output_perms: list = field(default_factory=list)


def meta(node) -> object:
    """PyTorch's result metadata for a node (a FakeTensor, a tuple of them, a number)."""
    value = node.meta.get("val", node.meta.get("example_value"))
    if value is None and "tensor_meta" in node.meta:
        value = node.meta["tensor_meta"]
    return value


def dense_permutation(value) -> tuple[int, ...] | None:
    """The order of a tensor's dimensions in memory, outermost first, when it is a
    permutation of a contiguous layout other than the identity; else None."""
    try:
        shape = [int(d) for d in value.shape]
        strides = [int(s) for s in value.stride()]
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return None
    if value.numel() <= 1:
        return None
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    if order == list(range(len(shape))):
        return None
    return tuple(order)


def inverse(perm: Sequence[int]) -> list[int]:
    result = [0] * len(perm)
    for k, d in enumerate(perm):
        result[d] = k
    return result


def static_shape(value, op: str) -> tuple[int, ...]:
    """A tensor's shape as ints, or Unsupported for a symbolic one."""
    try:
        return tuple(int(d) for d in value.shape)
    except (TypeError, ValueError, RuntimeError) as e:
        raise Unsupported(op, f"symbolic shape {tuple(value.shape)} ({e})") from e


class GraphLowering:
    """Builds the HLO for one FX graph; the `g` of every lowering."""

    def __init__(self, gm: torch.fx.GraphModule, name: str = "torch_graph",
                 example_inputs: Sequence | None = None):
        self.gm = gm
        self.example_inputs = list(example_inputs) if example_inputs is not None else None
        self._placeholder_index = 0
        self.input_perms: list = []
        self.module_builder = ModuleBuilder(name)
        self.b = self.module_builder.computation("main")
        self.env: dict = {}
        self.parameter_count = 0
        self._seed: H | None = None
        self._random_calls = 0
        self.op = "?"  # the op being lowered, for error messages

    # -- the walk -------------------------------------------------------------------------
    def lower(self) -> LoweredGraph:
        output_node = None
        for node in self.gm.graph.nodes:
            self.op = _op_name(node)
            if node.op == "placeholder":
                self.env[node] = self._placeholder(node)
            elif node.op == "get_attr":
                self.env[node] = self._attribute(node)
            elif node.op == "call_function":
                self.env[node] = self._call(node)
            elif node.op == "output":
                output_node = node
            else:
                raise Unsupported(self.op, f"FX node kind {node.op!r} is not lowered")
        if output_node is None:
            raise Unsupported("output", "the graph has no output node")
        return self._finish(output_node)

    def _placeholder(self, node) -> H | object:
        value = meta(node)
        position = self._placeholder_index
        self._placeholder_index += 1
        example = self.example_inputs[position] if self.example_inputs is not None and \
            position < len(self.example_inputs) else None
        if type(example) is int:  # a concrete size: the caller compiles per its value
            return example
        if not isinstance(value, torch.Tensor):
            if isinstance(value, bool | int | float) and not isinstance(value, torch.SymInt):
                raise Unsupported("placeholder", f"non-tensor input {node.name}={value!r}")
            raise Unsupported("placeholder", f"input {node.name} is {type(value).__name__}, "
                                             "not a tensor (symbolic shapes are not lowered)")
        shape = static_shape(value, f"input {node.name}")
        element_type = primitive_type(value.dtype, f"input {node.name}")
        perm = dense_permutation(value)
        physical = [shape[d] for d in perm] if perm else shape
        parameter = self.b.parameter(self.parameter_count,
                                     Shape.array(element_type, physical),
                                     name=_safe_name(node.name))
        self.parameter_count += 1
        self.input_perms.append(perm)
        return self.b.transpose(parameter, inverse(perm)) if perm else parameter

    def _attribute(self, node) -> H:
        value = operator.attrgetter(node.target)(self.gm)
        if not isinstance(value, torch.Tensor):
            raise Unsupported("get_attr", f"{node.target} is a {type(value).__name__}")
        return self.constant_tensor(value)

    def _call(self, node):
        target = node.target
        args = self._resolve(node.args)
        kwargs = self._resolve(node.kwargs)
        if target is operator.getitem:
            return args[0][args[1]]
        if target in _PYTHON_OPS:
            if any(isinstance(a, H) for a in args):
                raise Unsupported(self.op, "Python arithmetic on a tensor")
            return target(*args)
        if target is torch.ops.aten.sym_size.int:
            return static_shape(meta(node.args[0]), self.op)[args[1]]
        fn = lowering_for(target)
        if fn is None:
            raise Unsupported(self.op, "no lowering for this operation")
        out = meta(node)
        try:
            result = fn(self, out, *args, **kwargs)
        except Unsupported:
            raise
        except (XlapyError, NotImplementedError, ValueError, TypeError, IndexError,
                KeyError) as e:
            raise Unsupported(self.op, f"{type(e).__name__}: {e}") from e
        return self._check(result, out)

    def _resolve(self, value):
        if isinstance(value, torch.fx.Node):
            return self.env[value]
        if isinstance(value, list | tuple):
            return type(value)(self._resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self._resolve(v) for k, v in value.items()}
        return value

    def _check(self, result, out):
        """`result` in the dtype PyTorch gives and checked against its shape."""
        if isinstance(out, torch.Tensor):
            if not isinstance(result, H):
                raise Unsupported(self.op, f"the lowering returned {type(result).__name__}, "
                                           "not a tensor")
            return self.to_meta(result, out)
        if isinstance(out, list | tuple):
            if not isinstance(result, list | tuple) or len(result) != len(out):
                raise Unsupported(self.op, f"the lowering returned {type(result).__name__}, "
                                           f"PyTorch gives {len(out)} results")
            return tuple(self._check(r, o) if isinstance(o, torch.Tensor) else r
                         for r, o in zip(result, out))
        return result

    def to_meta(self, x: H, out: torch.Tensor) -> H:
        """`x` in `out`'s dtype; Unsupported when its shape is not `out`'s."""
        shape = static_shape(out, self.op)
        if tuple(x.shape.dimensions) != shape:
            raise Unsupported(self.op, f"lowered to shape {list(x.shape.dimensions)}, "
                                       f"PyTorch gives {list(shape)}")
        return self.convert(x, primitive_type(out.dtype, self.op))

    def _finish(self, output_node) -> LoweredGraph:
        results = output_node.args[0]
        if not isinstance(results, list | tuple):
            results = (results,)
        elements, outputs, dtypes, perms = [], [], [], []
        for node in results:
            value = self.env[node] if isinstance(node, torch.fx.Node) else node
            if isinstance(value, H):
                perm = dense_permutation(meta(node))
                outputs.append(len(elements))
                elements.append(self.b.transpose(value, perm) if perm else value)
                dtypes.append(meta(node).dtype)
                perms.append(perm)
            else:
                outputs.append(("value", value))
        root = self.b.tuple(elements)
        module = self.module_builder.build(self.b.build(root))
        return LoweredGraph(module, self.parameter_count, outputs, self._seed is not None,
                            dtypes, self.input_perms, perms)

    # -- helpers for lowerings -----------------------------------------------------------
    def dims(self, x: H) -> tuple[int, ...]:
        return tuple(x.shape.dimensions)

    def ptype(self, x: H) -> PrimitiveType:
        return x.shape.element_type

    def type_of(self, out) -> PrimitiveType:
        """The element type of a meta value or torch dtype."""
        dtype = out if isinstance(out, torch.dtype) else out.dtype
        return primitive_type(dtype, self.op)

    def shape_of(self, out) -> tuple[int, ...]:
        return static_shape(out, self.op)

    def const(self, value, element_type: PrimitiveType, dims: Sequence[int] = ()) -> H:
        """A scalar constant of `element_type`, broadcast to `dims` when given."""
        c = self.b.constant(np.asarray(value).astype(element_type.numpy))
        return self.broadcast_to(c, dims) if dims else c

    def constant_tensor(self, tensor: torch.Tensor) -> H:
        array = tensor.detach().cpu().contiguous()
        if array.dtype == torch.bfloat16:
            value = array.view(torch.int16).numpy().view(PrimitiveType.BF16.numpy)
        else:
            value = array.numpy()
        return self.b.constant(value.copy())

    def convert(self, x: H, element_type: PrimitiveType) -> H:
        if self.ptype(x) is element_type:
            return x
        if element_type is PrimitiveType.PRED:  # PyTorch's bool(x) is x != 0
            return self.b.compare(x, self.const(0, self.ptype(x), self.dims(x)), "NE")
        return self.b.convert(x, element_type)

    def broadcast_to(self, x: H, dims: Sequence[int]) -> H:
        """NumPy-style broadcasting: trailing dimensions line up, size 1 stretches."""
        dims = tuple(int(d) for d in dims)
        have = self.dims(x)
        if have == dims:
            return x
        if len(have) > len(dims):
            raise Unsupported(self.op, f"cannot broadcast {list(have)} to {list(dims)}")
        offset = len(dims) - len(have)
        return self.b.broadcast(x, dims, range(offset, len(dims)))

    def operand(self, value, element_type: PrimitiveType, dims: Sequence[int]) -> H:
        """A tensor or Python scalar as `element_type`, broadcast to `dims`."""
        if isinstance(value, H):
            return self.broadcast_to(self.convert(value, element_type), dims)
        if isinstance(value, bool | int | float | np.number):
            return self.const(value, element_type, dims)
        raise Unsupported(self.op, f"operand {value!r} is not a tensor or a number")

    def operands(self, out, *values, element_type: PrimitiveType | None = None) -> list[H]:
        """Each value as the result's (or `element_type`'s) type at the result's shape."""
        element_type = element_type or self.type_of(out)
        dims = self.shape_of(out)
        return [self.operand(v, element_type, dims) for v in values]

    def reduce(self, x: H, axes: Sequence[int], opcode: Opcode, init) -> H:
        """Reduce `axes` of x with the scalar `opcode`, starting from `init`."""
        element_type = self.ptype(x)
        axes = sorted({a % max(len(self.dims(x)), 1) for a in axes}) if self.dims(x) else []
        if not axes:
            return x
        return self.b.reduce(x, self.const(init, element_type), axes,
                             self.b.scalar_reducer(opcode, element_type))

    def sum(self, x: H, axes: Sequence[int]) -> H:
        return self.reduce(x, axes, Opcode.ADD, 0)

    def iota(self, element_type: PrimitiveType, dims: Sequence[int], dimension: int) -> H:
        return self.b.iota(Shape.array(element_type, dims), dimension)

    def random_uniform(self, dims: Sequence[int], element_type: PrimitiveType) -> H:
        """Uniform [0, 1) numbers of `dims`, from the call's random key (an extra s32[2]
        parameter drawn from torch's generator per call) and a counter per element,
        mixed by two rounds of MurmurHash3's finaliser."""
        if self._seed is None:
            self._seed = self.b.parameter(self.parameter_count,
                                          Shape.array(PrimitiveType.S32, [2]), name="seed")
            self.parameter_count += 1
        self._random_calls += 1
        u32 = PrimitiveType.U32
        key = self.b.bitcast_convert(self._seed, u32)
        k0 = self.b.reshape(self.b.slice(key, [0], [1]), [])
        k1 = self.b.reshape(self.b.slice(key, [1], [2]), [])
        count = int(np.prod(dims, dtype=np.int64))
        counter = self.iota(u32, [count], 0)
        bits = self.b.xor(counter, self.broadcast_to(k0, [count]))
        bits = self.b.add(bits, self.const(self._random_calls * 0x9E3779B9 % 2 ** 32, u32,
                                           [count]))
        bits = self._fmix32(bits)
        bits = self._fmix32(self.b.xor(bits, self.broadcast_to(k1, [count])))
        mantissa = self.b.shift_right_logical(bits, self.const(8, u32, [count]))
        uniform = self.b.multiply(self.b.convert(mantissa, PrimitiveType.F32),
                                  self.const(2.0 ** -24, PrimitiveType.F32, [count]))
        return self.convert(self.b.reshape(uniform, dims), element_type)

    def _fmix32(self, h: H) -> H:
        u32, n = PrimitiveType.U32, self.dims(h)
        for shift, multiplier in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
            h = self.b.xor(h, self.b.shift_right_logical(h, self.const(shift, u32, n)))
            h = self.b.multiply(h, self.const(multiplier, u32, n))
        return self.b.xor(h, self.b.shift_right_logical(h, self.const(16, u32, n)))


def lower_graph(gm: torch.fx.GraphModule, name: str = "torch_graph",
                example_inputs: Sequence | None = None) -> LoweredGraph:
    """The HLO module of an ATen FX graph, or Unsupported naming the op that stops it.
    Integer `example_inputs` are taken as constants (whoever calls the result must call
    it with those values: the backend compiles per signature)."""
    return GraphLowering(gm, name, example_inputs).lower()


def _op_name(node) -> str:
    target = node.target
    if node.op == "call_function":
        return str(target) if hasattr(target, "overloadpacket") else \
            getattr(target, "__name__", str(target))
    return node.op


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "arg"
