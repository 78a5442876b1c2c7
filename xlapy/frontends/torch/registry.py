"""The lowering table: one function per ATen operation, ATen op -> HLO.

A lowering is registered for an op packet (`aten.add`: every overload) or one
overload (`aten.sum.dim_IntList`), the overload winning when both exist:

    @lowering(aten.relu)
    def relu(g, out, x):            # g: the GraphLowering, out: the node's meta value
        return g.b.maximum(x, g.zeros_like(out))

It is called with the node's arguments, tensors replaced by the HLO instructions
computed for them and everything else (ints, floats, lists, dtypes) as is, and
returns an instruction, or a tuple/list of them for an op with several results.
`out` is the node's FakeTensor (or tuple of them): the result's shape and dtype,
which PyTorch has already inferred, so a lowering never re-derives them.
"""

from __future__ import annotations

from collections.abc import Callable


class Unsupported(Exception):
    """Why a graph cannot be lowered; `op` names the ATen operation at fault."""

    def __init__(self, op: str, reason: str):
        super().__init__(f"{op}: {reason}")
        self.op = op
        self.reason = reason


LOWERINGS: dict[object, Callable] = {}
"""ATen OpOverload or OpOverloadPacket -> its lowering."""


def lowering(*ops) -> Callable:
    """Register the decorated function as the lowering of each op in `ops`."""
    def register(fn: Callable) -> Callable:
        for op in ops:
            if op in LOWERINGS:
                raise ValueError(f"{op} has two lowerings: {LOWERINGS[op].__name__} and "
                                 f"{fn.__name__}")
            LOWERINGS[op] = fn
        return fn
    return register


def lowering_for(target) -> Callable | None:
    """The lowering of an FX node's target: its overload's, else its packet's."""
    fn = LOWERINGS.get(target)
    if fn is None and hasattr(target, "overloadpacket"):
        fn = LOWERINGS.get(target.overloadpacket)
    return fn
