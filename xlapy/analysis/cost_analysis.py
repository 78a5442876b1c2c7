"""Cost analysis: flops, transcendentals and bytes accessed, by XLA's conventions.

`cost_analysis(module)` returns what JAX's `Compiled.cost_analysis()` shows,
XLA's HloCostAnalysis summed over the entry computation
(`xla/service/hlo_cost_analysis.cc`):

* "flops": one per element of an elementwise op; 2 per multiply-add of a
  `dot` (2·M·N·K) or `convolution` (2 · output features · input features
  per group · batch per batch group · the (kernel, output) position pairs
  that land on real input, so padding is not counted); a reduction applies
  its reducer once per element folded away (input minus output elements);
* "transcendentals": one per element of exp, log, tanh, sqrt, rsqrt, power,
  sine, cosine... (the opcode table's TRANSCENDENTAL set), and of rng ops;
  these count here instead of in "flops";
* "bytes accessed": an instruction's operand bytes plus its output bytes,
  except that slices and gathers read only what they output, tuples and
  get-tuple-element move pointers, parameters and constants cost nothing,
  and a fusion is counted at its boundary only (what its body touches stays
  in registers); control flow counts its body once;
* "optimal_seconds": 0 (XLA derives it from per-device rates we do not have);
* per-operand and output bytes under XLA's keys "bytes accessed{i}{}" and
  "bytes accessedout{}".

Sizes follow XLA:CPU's shape-size function: an array's bytes, a tuple's
pointer table (8 bytes per element), nothing for a token. Unlike XLA, a
shape without a layout still has a size (the short text form omits them).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import ELEMENTWISE, TRANSCENDENTAL, Opcode
from xlapy.hlo.shape import Shape

FLOPS = "flops"
TRANSCENDENTALS = "transcendentals"
BYTES = "bytes accessed"
SECONDS = "optimal_seconds"
OUTPUT_BYTES = "bytes accessedout{}"
POINTER_SIZE = 8
FMA_FLOPS = 2

Costs = dict[str, float]


def operand_key(number: int) -> str:
    return f"bytes accessed{number}{{}}"


def shape_size(shape: Shape) -> int:
    """XLA:CPU's ShapeSizeBytes: array bytes; a tuple's table of pointers."""
    if shape.is_tuple:
        return POINTER_SIZE * len(shape.tuple_shapes)
    return shape.byte_size if shape.is_array else 0


def cost_analysis(module: HloModule) -> dict[str, float]:
    """Totals over the entry computation, with XLA's keys."""
    totals: Costs = {FLOPS: 0.0, TRANSCENDENTALS: 0.0, BYTES: 0.0, SECONDS: 0.0}
    for key, value in computation_costs(module.entry_computation).items():
        totals[key] = totals.get(key, 0.0) + value
    return totals


def computation_costs(computation: HloComputation) -> Costs:
    """The sum of `instruction_costs` over a computation's instructions."""
    totals: Costs = {}
    for instruction in computation.instructions:
        for key, value in instruction_costs(instruction).items():
            totals[key] = totals.get(key, 0.0) + value
    return totals


def instruction_costs(instruction: HloInstruction) -> Costs:
    """One instruction's costs: XLA's defaults (operand + output bytes, no flops),
    then its opcode's rule."""
    costs: Costs = {BYTES: float(shape_size(instruction.shape)),
                    OUTPUT_BYTES: float(shape_size(instruction.shape)), SECONDS: 0.0}
    for number, operand in enumerate(instruction.operands):
        costs[operand_key(number)] = float(shape_size(operand.shape))
        costs[BYTES] += shape_size(operand.shape)
    rule = _RULES.get(instruction.opcode)
    if rule is None and instruction.opcode in ELEMENTWISE:
        rule = _elementwise
    if rule is not None:
        costs = rule(instruction, costs) or costs
    return costs


# -- rules --------------------------------------------------------------------------------
def _elementwise(hlo: HloInstruction, costs: Costs) -> None:
    key = TRANSCENDENTALS if hlo.opcode in TRANSCENDENTAL else FLOPS
    costs[key] = float(hlo.shape.element_count)


def _free(hlo: HloInstruction, costs: Costs) -> None:
    """No code, no memory traffic: parameters, constants, pointer forwarding."""
    costs[BYTES] = costs[OUTPUT_BYTES] = 0.0
    for number in range(len(hlo.operands)):
        costs[operand_key(number)] = 0.0


def _tuple(hlo: HloInstruction, costs: Costs) -> None:
    _free(hlo, costs)
    costs[BYTES] = costs[OUTPUT_BYTES] = float(shape_size(hlo.shape))


def _transpose(hlo: HloInstruction, costs: Costs) -> None:
    if _transpose_is_bitcast(hlo):
        _free(hlo, costs)


def _transpose_is_bitcast(hlo: HloInstruction) -> bool:
    source, result = hlo.operands[0].shape, hlo.shape
    dims = hlo.attr("dimensions", ())
    moved = tuple(dims[d] for d in _minor_to_major(result))
    return moved == _minor_to_major(source)


def _minor_to_major(shape: Shape) -> tuple[int, ...]:
    if shape.layout is None:
        return tuple(range(shape.rank - 1, -1, -1))
    return shape.layout.minor_to_major


def _slice(hlo: HloInstruction, costs: Costs) -> None:
    out = shape_size(hlo.shape)
    costs[BYTES] = 2.0 * out
    costs[operand_key(0)] = float(out)


def _dynamic_slice(hlo: HloInstruction, costs: Costs) -> None:
    out, index = shape_size(hlo.shape), shape_size(hlo.operands[1].shape)
    costs[BYTES] = 2.0 * out + index
    costs[operand_key(0)] = float(out)


def _dynamic_update_slice(hlo: HloInstruction, costs: Costs) -> None:
    update, index = shape_size(hlo.operands[1].shape), shape_size(hlo.operands[2].shape)
    costs[BYTES] = 2.0 * update + index
    costs[OUTPUT_BYTES] = float(update)
    costs[operand_key(0)] = 0.0  # operand 0 is the output's memory


def _gather(hlo: HloInstruction, costs: Costs) -> None:
    out, indices = shape_size(hlo.shape), shape_size(hlo.operands[1].shape)
    costs[BYTES] = 2.0 * out + indices
    costs[operand_key(0)] = float(out)


def _scatter(hlo: HloInstruction, costs: Costs) -> None:
    n = (len(hlo.operands) - 1) // 2
    updates = hlo.operands[n + 1:]
    total = sum(shape_size(u.shape) for u in updates)
    for i, update in enumerate(updates):
        costs[operand_key(i)] = costs[operand_key(n + 1 + i)] = float(shape_size(update.shape))
    indices = shape_size(hlo.operands[n].shape)
    costs[BYTES] = 3.0 * total + indices
    costs[OUTPUT_BYTES] = float(total)
    _apply(hlo.attr("to_apply"), updates[0].shape.element_count, costs)


def _dot(hlo: HloInstruction, costs: Costs) -> None:
    lhs = hlo.operands[0].shape
    width = math.prod(lhs.dimensions[d] for d in hlo.attr("lhs_contracting_dims", ()))
    costs[FLOPS] = float(FMA_FLOPS * hlo.shape.element_count * width)


def _convolution(hlo: HloInstruction, costs: Costs) -> None:
    costs[FLOPS] = float(convolution_flops(hlo))


def convolution_flops(hlo: HloInstruction) -> int:
    """2 · (input features / groups) · output features · (batch / batch groups) ·
    the product over spatial dims of valid (kernel, output) position pairs."""
    lhs, rhs, out = hlo.operands[0].shape, hlo.operands[1].shape, hlo.shape
    dn = hlo.attr("dim_labels")
    window = hlo.attr("window")
    dims = window.dimensions if window is not None else ()
    valid = 1
    for i, wd in enumerate(dims):
        valid *= _valid_positions(lhs.dimensions[dn.input_spatial_dimensions[i]],
                                  rhs.dimensions[dn.kernel_spatial_dimensions[i]],
                                  out.dimensions[dn.output_spatial_dimensions[i]], wd)
    features = lhs.dimensions[dn.input_feature_dimension] // hlo.attr("feature_group_count", 1)
    batch = lhs.dimensions[dn.input_batch_dimension] // hlo.attr("batch_group_count", 1)
    return FMA_FLOPS * features * out.dimensions[dn.output_feature_dimension] * batch * valid


def _valid_positions(inputs: int, kernel: int, outputs: int, wd) -> int:
    count = 0
    for k in range(kernel):
        for o in range(outputs):
            undilated = o * wd.stride - wd.padding_low + k * wd.window_dilation
            if undilated % wd.base_dilation:
                continue
            position = undilated // wd.base_dilation
            count += 0 <= position < inputs
    return count


def _fft(hlo: HloInstruction, costs: Costs) -> None:
    factors = math.prod(max(n, 1).bit_length() - 1 for n in hlo.attr("fft_length", ()))
    costs[FLOPS] = float(FMA_FLOPS * 4 * factors * hlo.operands[0].shape.element_count)


def _sort(hlo: HloInstruction, costs: Costs) -> None:
    n = hlo.operands[0].shape.element_count
    costs[FLOPS] = float(n * max(n - 1, 0).bit_length())


def _triangular_solve(hlo: HloInstruction, costs: Costs) -> None:
    a, b = hlo.operands[0].shape, hlo.operands[1].shape
    costs[BYTES] = shape_size(hlo.shape) + shape_size(a) / 2.0 + shape_size(b)
    costs[FLOPS] = float(FMA_FLOPS * a.dimensions[-1] * b.element_count)


def _cholesky(hlo: HloInstruction, costs: Costs) -> None:
    a = hlo.operands[0].shape
    costs[BYTES] = float(shape_size(a))
    costs[OUTPUT_BYTES] = costs[operand_key(0)] = shape_size(a) / 2.0
    costs[FLOPS] = float(a.dimensions[-1] * a.element_count // 3)


def _rng(hlo: HloInstruction, costs: Costs) -> None:
    costs[TRANSCENDENTALS] = float(sum(leaf.element_count for _, leaf in hlo.shape.leaves()
                                       if leaf.is_array))


def _all_reduce(hlo: HloInstruction, costs: Costs) -> None:
    leaves = [leaf for _, leaf in hlo.shape.leaves() if leaf.is_array]
    costs[FLOPS] = float(sum(leaf.element_count for leaf in leaves))
    out = sum(shape_size(leaf) for leaf in leaves)
    costs[OUTPUT_BYTES] = float(out)
    costs[BYTES] = float(out + sum(shape_size(op.shape) for op in hlo.operands))


def _custom_call(hlo: HloInstruction, costs: Costs) -> None:
    """Unknown work: XLA marks flops, bytes and seconds as -1."""
    for key in list(costs):
        costs[key] = -1.0
    costs[FLOPS] = -1.0


# -- rules that apply a called computation ------------------------------------------------
def _apply(computation: HloComputation, times: int, costs: Costs) -> None:
    """Add `times` runs of `computation`'s work (its bytes stay in registers)."""
    for key, value in computation_costs(computation).items():
        if not key.startswith(BYTES):
            costs[key] = costs.get(key, 0.0) + value * times


def _reduce(hlo: HloInstruction, costs: Costs) -> None:
    out = hlo.shape.tuple_shapes[0] if hlo.shape.is_tuple else hlo.shape
    folded = hlo.operands[0].shape.element_count - out.element_count
    _apply(hlo.attr("to_apply"), folded, costs)


def _map(hlo: HloInstruction, costs: Costs) -> None:
    _apply(hlo.attr("to_apply"), hlo.shape.element_count, costs)


def _reduce_window(hlo: HloInstruction, costs: Costs) -> None:
    dims = hlo.attr("window").dimensions
    out = hlo.shape.tuple_shapes[0] if hlo.shape.is_tuple else hlo.shape
    window = math.prod(d.size for d in dims)
    count = (window - 1) * out.element_count
    spans = [i for i, d in enumerate(dims)
             if d.size != 1 and d.padding_low == d.padding_high != 0
             and d.size == 2 * d.padding_low + 1]
    reduced = [d for d in dims if d.size != 1]
    padded = [d for d in dims if d.padding_low or d.padding_high]
    if len(reduced) == len(padded) == 1 and spans and hlo.shape.is_array \
            and dims[spans[0]].padding_low == hlo.shape.dimensions[spans[0]] - 1:
        span = hlo.shape.dimensions[spans[0]]  # a reduce broadcast back along one dim
        count = out.element_count // span + span - 1
    _apply(hlo.attr("to_apply"), count, costs)


def _select_and_scatter(hlo: HloInstruction, costs: Costs) -> None:
    source = hlo.operands[1].shape.element_count
    window = math.prod(d.size for d in hlo.attr("window").dimensions)
    _apply(hlo.attr("select"), source * (window - 1), costs)
    _apply(hlo.attr("scatter"), source, costs)


def _while(hlo: HloInstruction, costs: Costs) -> Costs:
    """One iteration: the body plus the condition, bytes included."""
    result: Costs = {}
    for computation in (hlo.attr("body"), hlo.attr("condition")):
        for key, value in computation_costs(computation).items():
            result[key] = result.get(key, 0.0) + value
    return result


def _call(hlo: HloInstruction, costs: Costs) -> Costs:
    return computation_costs(hlo.attr("to_apply"))


def _conditional(hlo: HloInstruction, costs: Costs) -> Costs:
    """The most expensive branch, property by property."""
    result: Costs = {}
    for branch in hlo.called_computations:
        for key, value in computation_costs(branch).items():
            result[key] = max(result.get(key, value), value)
    return result


def _fusion(hlo: HloInstruction, costs: Costs) -> Costs:
    """The body's work, but bytes only at the boundary: outputs written (a
    dynamic-update-slice root writes only its update), parameters read as
    `fusion_parameter_read_bytes` says, and large constants inside."""
    computation = hlo.attr("calls")
    result = {k: v for k, v in computation_costs(computation).items() if not k.startswith(BYTES)}
    written = _fusion_output_bytes(hlo, computation.root_instruction)
    result[OUTPUT_BYTES] = float(written)
    read = sum(float(shape_size(i.shape)) for i in computation.instructions
               if i.opcode is Opcode.CONSTANT and i.shape.is_array and i.shape.element_count > 1)
    users = _users(computation)
    for number, param in enumerate(computation.parameters):
        size = _parameter_read_bytes(param, users)
        result[operand_key(number)] = float(size)
        read += size
    result[BYTES] = written + read
    return result


def _fusion_output_bytes(hlo: HloInstruction, root: HloInstruction) -> int:
    total = 0
    for index, leaf in hlo.shape.leaves():
        if not leaf.is_array:
            continue
        producer = root.operands[index[0]] if index and root.opcode is Opcode.TUPLE else root
        if len(index) <= 1 and producer.opcode is Opcode.DYNAMIC_UPDATE_SLICE:
            total += shape_size(producer.operands[1].shape)
        else:
            total += shape_size(leaf)
    return total


def _users(computation: HloComputation) -> dict[int, list[HloInstruction]]:
    return computation.users()


def _parameter_read_bytes(param: HloInstruction, users) -> int:
    """A fused parameter's bytes read: tuple leaves through their get-tuple-elements."""
    if not param.shape.is_tuple:
        return fusion_parameter_read_bytes(param, users)
    total = 0
    for index, _ in param.shape.leaves():
        node = param
        for i in index:
            node = next((u for u in users.get(id(node), [])
                         if u.opcode is Opcode.GET_TUPLE_ELEMENT and u.attr("index") == i), node)
        total += fusion_parameter_read_bytes(node, users)
    return total


def fusion_parameter_read_bytes(hlo: HloInstruction, users) -> int:
    """XLA's FusionParameterReadBytes: slices read what they output, broadcasts and
    reshapes read the whole value each, other readers share one read."""
    size, shared_read = 0, False
    whole = shape_size(hlo.shape)
    for user in users.get(id(hlo), []):
        op = user.opcode
        if op is Opcode.FUSION:
            inner = user.attr("calls")
            inner_users = _users(inner)
            for number, operand in enumerate(user.operands):
                if operand is hlo:
                    size += fusion_parameter_read_bytes(inner.parameter(number), inner_users)
        elif op is Opcode.SLICE or (op is Opcode.DYNAMIC_SLICE and user.operands[0] is hlo):
            size += shape_size(user.shape)
        elif op in (Opcode.BROADCAST, Opcode.RESHAPE):
            size += whole
        elif op is Opcode.DYNAMIC_UPDATE_SLICE and user.operands[0] is hlo:
            continue  # the output's own memory
        elif not shared_read:
            shared_read = True
            size += whole
    return size


_RULES: dict[Opcode, Callable] = {
    Opcode.PARAMETER: _free, Opcode.CONSTANT: _free, Opcode.GET_TUPLE_ELEMENT: _free,
    Opcode.BITCAST: _free, Opcode.DOMAIN: _free, Opcode.AFTER_ALL: _free,
    Opcode.ADD_DEPENDENCY: _free, Opcode.TUPLE: _tuple, Opcode.TRANSPOSE: _transpose,
    Opcode.SLICE: _slice, Opcode.DYNAMIC_SLICE: _dynamic_slice,
    Opcode.DYNAMIC_UPDATE_SLICE: _dynamic_update_slice, Opcode.GATHER: _gather,
    Opcode.SCATTER: _scatter, Opcode.DOT: _dot, Opcode.CONVOLUTION: _convolution,
    Opcode.FFT: _fft, Opcode.SORT: _sort, Opcode.TRIANGULAR_SOLVE: _triangular_solve,
    Opcode.CHOLESKY: _cholesky, Opcode.RNG: _rng, Opcode.RNG_BIT_GENERATOR: _rng,
    Opcode.ALL_REDUCE: _all_reduce, Opcode.ALL_REDUCE_START: _all_reduce,
    Opcode.CUSTOM_CALL: _custom_call, Opcode.REDUCE: _reduce, Opcode.MAP: _map,
    Opcode.REDUCE_WINDOW: _reduce_window, Opcode.SELECT_AND_SCATTER: _select_and_scatter,
    Opcode.WHILE: _while, Opcode.CALL: _call, Opcode.CONDITIONAL: _conditional,
    Opcode.FUSION: _fusion,
}
"""Opcode -> rule; a rule edits the default costs in place or returns new ones.
Elementwise ops without an entry use `_elementwise`; anything else keeps the
defaults (bytes only), as XLA's handlers for copy, pad, concatenate... do."""
