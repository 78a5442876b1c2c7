"""The HLO opcode table: every opcode declared once, with its text spelling,
arity and the categories passes and backends dispatch on.

The spellings and arities follow XLA's `hlo_opcode.h`; a category is a plain
frozenset so that `op in ELEMENTWISE_BINARY` reads like the algebra it tests.
"""

from __future__ import annotations

import enum

VARIADIC = -1


class Opcode(enum.Enum):
    """An HLO opcode; `value` is the spelling used by XLA's text format."""

    ABS = "abs"
    ACOS = "acos"
    ACOSH = "acosh"
    ADD = "add"
    ADD_DEPENDENCY = "add-dependency"
    AFTER_ALL = "after-all"
    ALL_GATHER = "all-gather"
    ALL_GATHER_DONE = "all-gather-done"
    ALL_GATHER_START = "all-gather-start"
    ALL_REDUCE = "all-reduce"
    ALL_REDUCE_DONE = "all-reduce-done"
    ALL_REDUCE_START = "all-reduce-start"
    ALL_TO_ALL = "all-to-all"
    AND = "and"
    ASIN = "asin"
    ASINH = "asinh"
    ASYNC_DONE = "async-done"
    ASYNC_START = "async-start"
    ASYNC_UPDATE = "async-update"
    ATAN = "atan"
    ATAN2 = "atan2"
    ATANH = "atanh"
    BATCH_NORM_GRAD = "batch-norm-grad"
    BATCH_NORM_INFERENCE = "batch-norm-inference"
    BATCH_NORM_TRAINING = "batch-norm-training"
    BITCAST = "bitcast"
    BITCAST_CONVERT = "bitcast-convert"
    BROADCAST = "broadcast"
    CALL = "call"
    CBRT = "cbrt"
    CEIL = "ceil"
    CHOLESKY = "cholesky"
    CLAMP = "clamp"
    CLZ = "count-leading-zeros"
    COLLECTIVE_BROADCAST = "collective-broadcast"
    COLLECTIVE_PERMUTE = "collective-permute"
    COLLECTIVE_PERMUTE_DONE = "collective-permute-done"
    COLLECTIVE_PERMUTE_START = "collective-permute-start"
    COLLECTIVE_REDUCE = "collective-reduce"
    COMPARE = "compare"
    COMPLEX = "complex"
    CONCATENATE = "concatenate"
    CONDITIONAL = "conditional"
    CONSTANT = "constant"
    CONVERT = "convert"
    CONVOLUTION = "convolution"
    COPY = "copy"
    COPY_DONE = "copy-done"
    COPY_START = "copy-start"
    COS = "cosine"
    COSH = "cosh"
    CUSTOM_CALL = "custom-call"
    DIVIDE = "divide"
    DOMAIN = "domain"
    DOT = "dot"
    DYNAMIC_RESHAPE = "dynamic-reshape"
    DYNAMIC_SLICE = "dynamic-slice"
    DYNAMIC_UPDATE_SLICE = "dynamic-update-slice"
    ERF = "erf"
    EXP = "exponential"
    EXPM1 = "exponential-minus-one"
    FFT = "fft"
    FLOOR = "floor"
    FUSION = "fusion"
    GATHER = "gather"
    GET_DIMENSION_SIZE = "get-dimension-size"
    GET_TUPLE_ELEMENT = "get-tuple-element"
    IMAG = "imag"
    INFEED = "infeed"
    IOTA = "iota"
    IS_FINITE = "is-finite"
    LOG = "log"
    LOG1P = "log-plus-one"
    LOGISTIC = "logistic"
    MAP = "map"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    MULHI = "mulhi"
    MULTIPLY = "multiply"
    NEGATE = "negate"
    NOT = "not"
    OPTIMIZATION_BARRIER = "opt-barrier"
    OR = "or"
    OUTFEED = "outfeed"
    PAD = "pad"
    PARAMETER = "parameter"
    PARTITION_ID = "partition-id"
    POPCNT = "popcnt"
    POWER = "power"
    RAGGED_ALL_TO_ALL = "ragged-all-to-all"
    RAGGED_DOT = "ragged-dot"
    REAL = "real"
    RECV = "recv"
    RECV_DONE = "recv-done"
    REDUCE = "reduce"
    REDUCE_PRECISION = "reduce-precision"
    REDUCE_SCATTER = "reduce-scatter"
    REDUCE_WINDOW = "reduce-window"
    REMAINDER = "remainder"
    REPLICA_ID = "replica-id"
    RESHAPE = "reshape"
    REVERSE = "reverse"
    RNG = "rng"
    RNG_BIT_GENERATOR = "rng-bit-generator"
    RNG_GET_AND_UPDATE_STATE = "rng-get-and-update-state"
    ROUND_NEAREST_AFZ = "round-nearest-afz"
    ROUND_NEAREST_EVEN = "round-nearest-even"
    RSQRT = "rsqrt"
    SCALED_DOT = "scaled-dot"
    SCAN = "scan"
    SCATTER = "scatter"
    SELECT = "select"
    SELECT_AND_SCATTER = "select-and-scatter"
    SEND = "send"
    SEND_DONE = "send-done"
    SET_DIMENSION_SIZE = "set-dimension-size"
    SHIFT_LEFT = "shift-left"
    SHIFT_RIGHT_ARITHMETIC = "shift-right-arithmetic"
    SHIFT_RIGHT_LOGICAL = "shift-right-logical"
    SHUFFLE = "shuffle"
    SIGN = "sign"
    SIN = "sine"
    SINH = "sinh"
    SLICE = "slice"
    SORT = "sort"
    SQRT = "sqrt"
    STOCHASTIC_CONVERT = "stochastic-convert"
    SUBTRACT = "subtract"
    TAN = "tan"
    TANH = "tanh"
    TOPK = "topk"
    TRANSPOSE = "transpose"
    TRIANGULAR_SOLVE = "triangular-solve"
    TUPLE = "tuple"
    WHILE = "while"
    XOR = "xor"

    # Members are singletons: hash by identity at C speed (Enum's default hashes
    # the name in Python, which shows up in passes' hot loops).
    __hash__ = object.__hash__

    @property
    def arity(self) -> int:
        """Number of operands, or VARIADIC."""
        return _ARITY.get(self, VARIADIC)

    @classmethod
    def from_text(cls, text: str) -> Opcode:
        """The opcode spelled `text`; raises KeyError for an unknown spelling."""
        return _BY_TEXT[text]

    def __str__(self) -> str:
        return self.value


_BY_TEXT = {op.value: op for op in Opcode}

Op = Opcode

ELEMENTWISE_UNARY = frozenset({
    Op.ABS, Op.ACOS, Op.ACOSH, Op.ASIN, Op.ASINH, Op.ATAN, Op.ATANH, Op.CBRT, Op.CEIL, Op.CLZ,
    Op.COS, Op.COSH, Op.ERF, Op.EXP, Op.EXPM1, Op.FLOOR, Op.IMAG, Op.IS_FINITE, Op.LOG, Op.LOG1P,
    Op.LOGISTIC, Op.NEGATE, Op.NOT, Op.POPCNT, Op.REAL, Op.ROUND_NEAREST_AFZ,
    Op.ROUND_NEAREST_EVEN, Op.RSQRT, Op.SIGN, Op.SIN, Op.SINH, Op.SQRT, Op.TAN, Op.TANH,
})
"""Unary ops computed element by element; the result has the operand's dims."""

ELEMENTWISE_BINARY = frozenset({
    Op.ADD, Op.AND, Op.ATAN2, Op.COMPLEX, Op.DIVIDE, Op.MAXIMUM, Op.MINIMUM, Op.MULHI,
    Op.MULTIPLY, Op.OR, Op.POWER, Op.REMAINDER, Op.SHIFT_LEFT, Op.SHIFT_RIGHT_ARITHMETIC,
    Op.SHIFT_RIGHT_LOGICAL, Op.SUBTRACT, Op.XOR,
})
"""Binary ops computed element by element on operands of equal dims."""

COMMUTATIVE = frozenset({
    Op.ADD, Op.MULTIPLY, Op.MULHI, Op.MAXIMUM, Op.MINIMUM, Op.AND, Op.OR, Op.XOR,
})

TRANSCENDENTAL = frozenset({
    Op.ACOS, Op.ACOSH, Op.ASIN, Op.ASINH, Op.ATAN, Op.ATAN2, Op.ATANH, Op.CBRT, Op.COS, Op.COSH,
    Op.ERF, Op.EXP, Op.EXPM1, Op.LOG, Op.LOG1P, Op.LOGISTIC, Op.POWER, Op.RSQRT, Op.SIN, Op.SINH,
    Op.SQRT, Op.TAN, Op.TANH,
})
"""Ops that count as transcendentals in cost analysis."""

ELEMENTWISE = ELEMENTWISE_UNARY | ELEMENTWISE_BINARY | frozenset({
    Op.CLAMP, Op.COMPARE, Op.CONVERT, Op.REDUCE_PRECISION, Op.SELECT, Op.STOCHASTIC_CONVERT,
})
"""Every op whose output element i depends only on element i of each operand
(bitcast-convert is excluded: it changes rank when widths differ)."""

DATA_MOVEMENT = frozenset({
    Op.BITCAST, Op.BROADCAST, Op.CONCATENATE, Op.COPY, Op.DYNAMIC_SLICE,
    Op.DYNAMIC_UPDATE_SLICE, Op.GATHER, Op.PAD, Op.RESHAPE, Op.REVERSE, Op.SCATTER, Op.SLICE,
    Op.TRANSPOSE,
})

REDUCTION = frozenset({Op.REDUCE, Op.REDUCE_WINDOW, Op.SELECT_AND_SCATTER})

CONTROL_FLOW = frozenset({Op.CALL, Op.CONDITIONAL, Op.WHILE})

COLLECTIVE = frozenset({
    Op.ALL_GATHER, Op.ALL_GATHER_START, Op.ALL_GATHER_DONE, Op.ALL_REDUCE, Op.ALL_REDUCE_START,
    Op.ALL_REDUCE_DONE, Op.ALL_TO_ALL, Op.COLLECTIVE_BROADCAST, Op.COLLECTIVE_PERMUTE,
    Op.COLLECTIVE_PERMUTE_START, Op.COLLECTIVE_PERMUTE_DONE, Op.COLLECTIVE_REDUCE,
    Op.RAGGED_ALL_TO_ALL, Op.REDUCE_SCATTER,
})

SIDE_EFFECTING = frozenset({
    Op.INFEED, Op.OUTFEED, Op.SEND, Op.SEND_DONE, Op.RECV, Op.RECV_DONE, Op.RNG,
    Op.RNG_GET_AND_UPDATE_STATE,
})
"""Ops that DCE and CSE must never remove or merge (custom-call decides per call)."""

_FIXED_ARITY = {
    1: [Op.ABS, Op.ACOS, Op.ACOSH, Op.ALL_GATHER_DONE, Op.ALL_REDUCE_DONE, Op.ASIN, Op.ASINH,
        Op.ASYNC_DONE, Op.ATAN, Op.ATANH, Op.BITCAST, Op.BITCAST_CONVERT, Op.BROADCAST, Op.CBRT,
        Op.CEIL, Op.CHOLESKY, Op.CLZ, Op.COLLECTIVE_PERMUTE_DONE, Op.CONVERT, Op.COPY,
        Op.COPY_DONE, Op.COPY_START, Op.COS, Op.COSH, Op.DOMAIN, Op.ERF, Op.EXP, Op.EXPM1, Op.FFT,
        Op.FLOOR, Op.GET_DIMENSION_SIZE, Op.GET_TUPLE_ELEMENT, Op.IMAG, Op.INFEED, Op.IS_FINITE,
        Op.LOG, Op.LOG1P, Op.LOGISTIC, Op.NEGATE, Op.NOT, Op.OPTIMIZATION_BARRIER, Op.POPCNT,
        Op.REAL, Op.RECV, Op.RECV_DONE, Op.REDUCE_PRECISION, Op.RESHAPE, Op.REVERSE,
        Op.RNG_BIT_GENERATOR, Op.ROUND_NEAREST_AFZ, Op.ROUND_NEAREST_EVEN, Op.RSQRT,
        Op.SEND_DONE, Op.SHUFFLE, Op.SIGN, Op.SIN, Op.SINH, Op.SLICE, Op.SQRT, Op.TAN, Op.TANH,
        Op.TOPK, Op.TRANSPOSE, Op.WHILE],
    2: [Op.ADD, Op.ADD_DEPENDENCY, Op.AND, Op.ATAN2, Op.COMPARE, Op.COMPLEX, Op.DIVIDE, Op.DOT,
        Op.GATHER, Op.MAXIMUM, Op.MINIMUM, Op.MULHI, Op.MULTIPLY, Op.OR, Op.OUTFEED, Op.PAD,
        Op.POWER, Op.REMAINDER, Op.SEND, Op.SET_DIMENSION_SIZE, Op.SHIFT_LEFT,
        Op.SHIFT_RIGHT_ARITHMETIC, Op.SHIFT_RIGHT_LOGICAL, Op.STOCHASTIC_CONVERT,
        Op.SUBTRACT, Op.TRIANGULAR_SOLVE, Op.XOR],
    3: [Op.BATCH_NORM_TRAINING, Op.CLAMP, Op.RAGGED_DOT, Op.SELECT, Op.SELECT_AND_SCATTER],
    4: [Op.SCALED_DOT],
    5: [Op.BATCH_NORM_GRAD, Op.BATCH_NORM_INFERENCE],
    6: [Op.RAGGED_ALL_TO_ALL],
    0: [Op.CONSTANT, Op.IOTA, Op.PARAMETER, Op.PARTITION_ID, Op.REPLICA_ID,
        Op.RNG_GET_AND_UPDATE_STATE],
}
_ARITY = {op: n for n, ops in _FIXED_ARITY.items() for op in ops}

del Op
