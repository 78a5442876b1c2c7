"""`rng-bit-generator` natively: ThreeFry-2x32 and Philox-4x32, bit for bit the
interpreter's (`hlo/evaluator/rng.py`, which matches XLA's expansion).

One encryption of one counter is a *block*; the data kernel runs over blocks
[begin, end), so large outputs are generated on threads, and writes each
block's words where XLA puts them:

* ThreeFry 64-bit: element i (row-major) is block i, words joined (low, high);
* ThreeFry 32-bit: the first even dimension (else the largest) is halved;
  block j of the halved shape writes its two words to positions 2h and 2h+1
  of that dimension (the second dropped past an odd end);
* Philox 32-bit: element 4j + w is word w of block j; 64-bit: element
  2j + h joins words (2h, 2h + 1).

Narrower elements keep the low bits of the 32-bit word; float elements are
the bits reinterpreted (written as raw bits, so NaN patterns survive). The
new state is written by a second, single-threaded kernel after the data (the
state output may share the state operand's buffer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.in_place import discarded_on_error, new_kernel
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.ir_array import minor_to_major, strides
from xlapy.codegen.loops import for_range
from xlapy.hlo.attributes import RngAlgorithm
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA
_W32A, _W32B = 0x9E3779B9, 0xBB67AE85
_M4x32A, _M4x32B = 0xD2511F53, 0xCD9E8D57
_ELEMENTS = frozenset({P.S8, P.S16, P.S32, P.S64, P.U8, P.U16, P.U32, P.U64, P.F16, P.BF16,
                       P.F32, P.F64})
_WORK_PER_BLOCK = 64
"""Rough instructions per block, for the threading cost model."""


def _i32(value: int) -> ir.Constant:
    return ir.Constant(T.I32, value & 0xFFFFFFFF)


def _i64(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value & 0xFFFFFFFFFFFFFFFF)


def _split_dim(dims) -> int:
    """The dimension XLA's SplitShapeIntoHalves halves: the first even one, else the
    first of the largest."""
    for i, d in enumerate(dims):
        if d % 2 == 0:
            return i
    return max(range(len(dims)), key=lambda i: (dims[i], -i))


@dataclass(frozen=True)
class RngPlan:
    algorithm: RngAlgorithm
    state_size: int
    shape: object       # of the data
    width: int          # 32 or 64: the generator's word size for this element type
    blocks: int

    @staticmethod
    def of(instruction) -> RngPlan | None:
        state_shape, data_shape = instruction.shape.tuple_shapes
        element = data_shape.element_type
        if element not in _ELEMENTS:
            return None        # pred, complex, sub-byte: the interpreter's way

        state = instruction.operands[0].shape
        if state.element_type is not P.U64 or state.rank != 1:
            return None
        algorithm = instruction.attr("algorithm", RngAlgorithm.DEFAULT)
        if algorithm is RngAlgorithm.DEFAULT:
            algorithm = RngAlgorithm.PHILOX
        size = state.dimensions[0]
        if size not in ((2,) if algorithm is RngAlgorithm.THREE_FRY else (2, 3)):
            return None
        width = 64 if element.bit_width == 64 else 32
        dims = data_shape.dimensions
        count = math.prod(dims)
        if algorithm is RngAlgorithm.PHILOX:
            blocks = -(-count // (2 if width == 64 else 4))
        elif width == 64 or not dims:
            blocks = count if dims else 1
        else:
            half = list(dims)
            half[_split_dim(dims)] = (dims[_split_dim(dims)] + 1) // 2
            blocks = math.prod(half)
        return RngPlan(algorithm, size, data_shape, width, blocks)

    @property
    def half_dims(self) -> list[int]:
        dims = list(self.shape.dimensions)
        s = _split_dim(dims)
        dims[s] = (dims[s] + 1) // 2
        return dims


@special(Op.RNG_BIT_GENERATOR)
def rng_bit_generator(cg, instruction) -> bool:
    plan = RngPlan.of(instruction)
    if plan is None:
        return False
    state = instruction.operands[0]
    (_, _, state_out), (_, _, data_out) = cg.output_leaves(instruction)
    state_in = cg.slice_of(state)
    if plan.blocks > 0:
        slices = [state_in, data_out]
        fn, b, pointers, begin, end = new_kernel(cg, instruction, "rng", slices, 1)
        with discarded_on_error(cg.llmod, fn):
            emit_data(b, plan, pointers, begin, end)
        cg.call_kernel(fn, slices, plan.blocks, plan.blocks * _WORK_PER_BLOCK)
    slices = [state_in, state_out]
    fn, b, pointers, _, _ = new_kernel(cg, instruction, "rng_state", slices, 1)
    with discarded_on_error(cg.llmod, fn):
        emit_state(b, plan, pointers)
    cg.call_kernel(fn, slices, 1, 1)
    return True


# -- the kernels ----------------------------------------------------------------------------
def _state_words(b, plan: RngPlan, pointer):
    words = b.bitcast(pointer, T.I64.as_pointer())
    return [b.load(b.gep(words, [_i64(i)])) for i in range(plan.state_size)]


def emit_state(b, plan: RngPlan, pointers) -> None:
    """new state = [key, counter + blocks used] (carrying into the high word of u64[3])."""
    state = _state_words(b, plan, pointers[0])
    low = b.add(state[1], _i64(plan.blocks))
    out = b.bitcast(pointers[1], T.I64.as_pointer())
    words = [state[0], low]
    if plan.state_size == 3:
        carry = b.zext(b.icmp_unsigned("<", low, state[1]), T.I64)
        words.append(b.add(state[2], carry))
    for i, word in enumerate(words):
        b.store(word, b.gep(out, [_i64(i)]))
    b.ret_void()


def emit_data(b, plan: RngPlan, pointers, begin, end) -> None:
    state = _state_words(b, plan, pointers[0])
    out = _Output(b, pointers[1], plan.shape)
    key = state[0]
    keys = (b.trunc(key, T.I32), b.trunc(b.lshr(key, _i64(32)), T.I32))
    with for_range(b, begin, end, name="block") as j:
        if plan.algorithm is RngAlgorithm.THREE_FRY:
            counter = b.add(state[1], j)
            words = threefry2x32(b, _split64(b, counter), keys)
            _threefry_store(b, plan, out, j, words)
        else:
            low = b.add(state[1], j)
            high = state[0] if plan.state_size == 2 else state[2]
            high = b.add(high, b.zext(b.icmp_unsigned("<", low, state[1]), T.I64))
            words = philox4x32(b, _split64(b, low) + _split64(b, high), keys)
            _philox_store(b, plan, out, j, words)
    b.ret_void()


def _split64(b, value) -> list:
    return [b.trunc(value, T.I32), b.trunc(b.lshr(value, _i64(32)), T.I32)]


def _join(b, low, high):
    return b.or_(b.zext(low, T.I64), b.shl(b.zext(high, T.I64), _i64(32)))


# -- the ciphers ---------------------------------------------------------------------------
def threefry2x32(b, counter, key):
    """Threefry-2x32, 20 rounds (Salmon et al. 2011), on i32 values."""
    k0, k1 = key
    ks = (k0, k1, b.xor(b.xor(k0, k1), _i32(_PARITY)))
    x0, x1 = b.add(counter[0], ks[0]), b.add(counter[1], ks[1])
    for block in range(5):
        for rotation in _ROTATIONS[4 * (block % 2): 4 * (block % 2) + 4]:
            x0 = b.add(x0, x1)
            rotated = b.or_(b.shl(x1, _i32(rotation)), b.lshr(x1, _i32(32 - rotation)))
            x1 = b.xor(rotated, x0)
        x0 = b.add(x0, ks[(block + 1) % 3])
        x1 = b.add(b.add(x1, ks[(block + 2) % 3]), _i32(block + 1))
    return x0, x1


def philox4x32(b, counter, key):
    """Philox-4x32, 10 rounds (Salmon et al. 2011), on i32 values."""
    x0, x1, x2, x3 = counter
    k0, k1 = key
    for _ in range(10):
        hi0, lo0 = _mulhilo(b, x0, _M4x32A)
        hi1, lo1 = _mulhilo(b, x2, _M4x32B)
        x0, x1, x2, x3 = b.xor(b.xor(hi1, x1), k0), lo1, b.xor(b.xor(hi0, x3), k1), lo0
        k0, k1 = b.add(k0, _i32(_W32A)), b.add(k1, _i32(_W32B))
    return x0, x1, x2, x3


def _mulhilo(b, x, multiplier: int):
    product = b.mul(b.zext(x, T.I64), _i64(multiplier))
    return b.trunc(b.lshr(product, _i64(32)), T.I32), b.trunc(product, T.I32)


# -- where the words go ---------------------------------------------------------------------
class _Output:
    """The data buffer as raw integers of the element's width, addressed by a
    logical row-major element number (or a multi-index) in any layout."""

    def __init__(self, b, pointer, shape):
        self.shape = shape
        self.width = shape.element_type.bit_width
        self.type = ir.IntType(self.width)
        self.ptr = b.bitcast(pointer, self.type.as_pointer())
        self.strides = strides(shape)
        self.row_major = list(minor_to_major(shape)) == list(range(shape.rank - 1, -1, -1))

    def store_bits(self, b, bits, offset) -> None:
        value = b.trunc(bits, self.type) if bits.type.width > self.width else bits
        b.store(value, b.gep(self.ptr, [offset]))

    def offset_of_index(self, b, index) -> ir.Value:
        offset = _i64(0)
        for i, stride in zip(index, self.strides):
            offset = b.add(offset, b.mul(i, _i64(stride)))
        return offset

    def offset_of_number(self, b, number) -> ir.Value:
        if self.row_major:
            return number
        return self.offset_of_index(b, _unflatten(b, number, self.shape.dimensions))


def _unflatten(b, number, dims) -> list:
    """Row-major element `number` as a multi-index over `dims`."""
    index = []
    for d in reversed(dims):
        index.append(b.urem(number, _i64(d)))
        number = b.udiv(number, _i64(d))
    return list(reversed(index))


def _philox_store(b, plan: RngPlan, out: _Output, j, words) -> None:
    count = plan.shape.element_count
    per_block = 2 if plan.width == 64 else 4
    values = [_join(b, words[2 * h], words[2 * h + 1]) for h in range(2)] \
        if plan.width == 64 else list(words)
    for k, value in enumerate(values):
        number = b.add(b.mul(j, _i64(per_block)), _i64(k))
        if count % per_block == 0 or k == 0:   # word 0 of a block is always inside
            out.store_bits(b, value, out.offset_of_number(b, number))
            continue
        with b.if_then(b.icmp_unsigned("<", number, _i64(count))):
            out.store_bits(b, value, out.offset_of_number(b, number))


def _threefry_store(b, plan: RngPlan, out: _Output, j, words) -> None:
    dims = plan.shape.dimensions
    if plan.width == 64:
        out.store_bits(b, _join(b, *words), out.offset_of_number(b, j))
        return
    if not dims:
        out.store_bits(b, words[0], _i64(0))
        return
    s = _split_dim(dims)
    index = _unflatten(b, j, plan.half_dims)
    first = b.mul(index[s], _i64(2))
    index[s] = first
    out.store_bits(b, words[0], out.offset_of_index(b, index))
    index[s] = b.add(first, _i64(1))
    if dims[s] % 2 == 0:
        out.store_bits(b, words[1], out.offset_of_index(b, index))
        return
    with b.if_then(b.icmp_unsigned("<", index[s], _i64(dims[s]))):
        out.store_bits(b, words[1], out.offset_of_index(b, index))
