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

O = Opcode

ELEMENTWISE_UNARY = frozenset({
    O.ABS, O.ACOS, O.ACOSH, O.ASIN, O.ASINH, O.ATAN, O.ATANH, O.CBRT, O.CEIL, O.CLZ,
    O.COS, O.COSH, O.ERF, O.EXP, O.EXPM1, O.FLOOR, O.IMAG, O.IS_FINITE, O.LOG, O.LOG1P,
    O.LOGISTIC, O.NEGATE, O.NOT, O.POPCNT, O.REAL, O.ROUND_NEAREST_AFZ,
    O.ROUND_NEAREST_EVEN, O.RSQRT, O.SIGN, O.SIN, O.SINH, O.SQRT, O.TAN, O.TANH,
})
"""Unary ops computed element by element; the result has the operand's dims."""

ELEMENTWISE_BINARY = frozenset({
    O.ADD, O.AND, O.ATAN2, O.COMPLEX, O.DIVIDE, O.MAXIMUM, O.MINIMUM, O.MULHI,
    O.MULTIPLY, O.OR, O.POWER, O.REMAINDER, O.SHIFT_LEFT, O.SHIFT_RIGHT_ARITHMETIC,
    O.SHIFT_RIGHT_LOGICAL, O.SUBTRACT, O.XOR,
})
"""Binary ops computed element by element on operands of equal dims."""

COMMUTATIVE = frozenset({O.ADD, O.MULTIPLY, O.MULHI, O.MAXIMUM, O.MINIMUM, O.AND, O.OR, O.XOR})

TRANSCENDENTAL = frozenset({
    O.ACOS, O.ACOSH, O.ASIN, O.ASINH, O.ATAN, O.ATAN2, O.ATANH, O.CBRT, O.COS, O.COSH,
    O.ERF, O.EXP, O.EXPM1, O.LOG, O.LOG1P, O.LOGISTIC, O.POWER, O.RSQRT, O.SIN, O.SINH,
    O.SQRT, O.TAN, O.TANH,
})
"""Ops that count as transcendentals in cost analysis."""

ELEMENTWISE = ELEMENTWISE_UNARY | ELEMENTWISE_BINARY | frozenset({
    O.CLAMP, O.COMPARE, O.CONVERT, O.REDUCE_PRECISION, O.SELECT, O.STOCHASTIC_CONVERT,
})
"""Every op whose output element i depends only on element i of each operand
(bitcast-convert is excluded: it changes rank when widths differ)."""

DATA_MOVEMENT = frozenset({
    O.BITCAST, O.BROADCAST, O.CONCATENATE, O.COPY, O.DYNAMIC_SLICE,
    O.DYNAMIC_UPDATE_SLICE, O.GATHER, O.PAD, O.RESHAPE, O.REVERSE, O.SCATTER, O.SLICE,
    O.TRANSPOSE,
})

REDUCTION = frozenset({O.REDUCE, O.REDUCE_WINDOW, O.SELECT_AND_SCATTER})

CONTROL_FLOW = frozenset({O.CALL, O.CONDITIONAL, O.WHILE})

COLLECTIVE = frozenset({
    O.ALL_GATHER, O.ALL_GATHER_START, O.ALL_GATHER_DONE, O.ALL_REDUCE, O.ALL_REDUCE_START,
    O.ALL_REDUCE_DONE, O.ALL_TO_ALL, O.COLLECTIVE_BROADCAST, O.COLLECTIVE_PERMUTE,
    O.COLLECTIVE_PERMUTE_START, O.COLLECTIVE_PERMUTE_DONE, O.COLLECTIVE_REDUCE,
    O.RAGGED_ALL_TO_ALL, O.REDUCE_SCATTER,
})

SIDE_EFFECTING = frozenset({
    O.INFEED, O.OUTFEED, O.SEND, O.SEND_DONE, O.RECV, O.RECV_DONE, O.RNG,
    O.RNG_GET_AND_UPDATE_STATE,
})
"""Ops that DCE and CSE must never remove or merge (custom-call decides per call)."""

_FIXED_ARITY = {
    1: [O.ABS, O.ACOS, O.ACOSH, O.ALL_GATHER_DONE, O.ALL_REDUCE_DONE, O.ASIN, O.ASINH,
        O.ASYNC_DONE, O.ATAN, O.ATANH, O.BITCAST, O.BITCAST_CONVERT, O.BROADCAST, O.CBRT,
        O.CEIL, O.CHOLESKY, O.CLZ, O.COLLECTIVE_PERMUTE_DONE, O.CONVERT, O.COPY,
        O.COPY_DONE, O.COPY_START, O.COS, O.COSH, O.DOMAIN, O.ERF, O.EXP, O.EXPM1, O.FFT,
        O.FLOOR, O.GET_DIMENSION_SIZE, O.GET_TUPLE_ELEMENT, O.IMAG, O.INFEED, O.IS_FINITE,
        O.LOG, O.LOG1P, O.LOGISTIC, O.NEGATE, O.NOT, O.OPTIMIZATION_BARRIER, O.POPCNT,
        O.REAL, O.RECV, O.RECV_DONE, O.REDUCE_PRECISION, O.RESHAPE, O.REVERSE,
        O.RNG_BIT_GENERATOR, O.ROUND_NEAREST_AFZ, O.ROUND_NEAREST_EVEN, O.RSQRT,
        O.SEND_DONE, O.SHUFFLE, O.SIGN, O.SIN, O.SINH, O.SLICE, O.SQRT, O.TAN, O.TANH,
        O.TOPK, O.TRANSPOSE, O.WHILE],
    2: [O.ADD, O.ADD_DEPENDENCY, O.AND, O.ATAN2, O.COMPARE, O.COMPLEX, O.DIVIDE, O.DOT,
        O.GATHER, O.MAXIMUM, O.MINIMUM, O.MULHI, O.MULTIPLY, O.OR, O.OUTFEED, O.PAD,
        O.POWER, O.REMAINDER, O.SEND, O.SET_DIMENSION_SIZE, O.SHIFT_LEFT,
        O.SHIFT_RIGHT_ARITHMETIC, O.SHIFT_RIGHT_LOGICAL, O.STOCHASTIC_CONVERT,
        O.SUBTRACT, O.TRIANGULAR_SOLVE, O.XOR],
    3: [O.BATCH_NORM_TRAINING, O.CLAMP, O.RAGGED_DOT, O.SELECT, O.SELECT_AND_SCATTER],
    4: [O.SCALED_DOT],
    5: [O.BATCH_NORM_GRAD, O.BATCH_NORM_INFERENCE],
    6: [O.RAGGED_ALL_TO_ALL],
    0: [O.CONSTANT, O.IOTA, O.PARAMETER, O.PARTITION_ID, O.REPLICA_ID,
        O.RNG_GET_AND_UPDATE_STATE],
}
_ARITY = {op: n for n, ops in _FIXED_ARITY.items() for op in ops}

del O
