"""`xnp.einsum`: Einstein summation lowered to HLO dots, reductions and
transposes.

The subscripts (explicit `->` output or NumPy's implicit one, `...` for
broadcast dimensions, or the interleaved operand/sublist form) are parsed
into one label list per operand. Each operand first loses what it can alone:
size-1 dimensions that broadcast against a larger one, repeated labels
(diagonals, taken with an iota mask and a sum, which is exact), and labels no
other operand or the output needs (summed). Then operands are contracted two
at a time with one `dot_general` each (labels both share and still need are
batch dimensions), in a greedy order that keeps intermediates small, or in
the order `optimize` gives. A final transpose puts the output in order.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from xlapy.core.trace import Array, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import promote_dtypes, reshape_exact, result_dtype_and_weak

_ELLIPSIS_BASE = 0x2460  # private labels for '...' dimensions: never letters


@dataclass
class _Operand:
    labels: list[str]
    array: Array


# -- parsing ------------------------------------------------------------------------------
def _interleaved_to_subscripts(args) -> tuple[str, list]:
    """einsum(op0, sublist0, op1, sublist1, ..., [out]) as a subscript string."""
    operands, terms = [], []
    args = list(args)
    while len(args) >= 2:
        operands.append(args.pop(0))
        terms.append(_sublist_term(args.pop(0)))
    output = "->" + _sublist_term(args.pop(0)) if args else ""
    return ",".join(terms) + output, operands


def _sublist_term(sublist) -> str:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    parts = []
    for item in sublist:
        if item is Ellipsis:
            parts.append("...")
        elif isinstance(item, (int, np.integer)) and 0 <= item < len(letters):
            parts.append(letters[int(item)])
        else:
            raise ValueError(f"einsum: sublist entries must be ints in [0, 52) or ..., "
                             f"got {item!r}")
    return "".join(parts)


def _split_term(term: str, ndim: int | None, n_ellipsis: int, where: str) -> list[str]:
    """A term's labels with '...' expanded to the right-aligned ellipsis labels."""
    if term.count("...") > 1 or term.replace("...", "").count(".") > 0:
        raise ValueError(f"einsum: {where} {term!r} has a malformed ellipsis")
    head, dots, tail = term.partition("...")
    for ch in head + tail:
        if not ch.isalpha():
            raise ValueError(f"einsum: {where} {term!r} holds {ch!r}; labels are letters")
    if not dots:
        if ndim is not None and len(term) != ndim:
            raise ValueError(f"einsum: {where} {term!r} names {len(term)} dimensions but the "
                             f"operand has {ndim}")
        return list(term)
    count = n_ellipsis if ndim is None else ndim - len(head) - len(tail)
    if count < 0:
        raise ValueError(f"einsum: {where} {term!r} names more dimensions than the operand's "
                         f"{ndim}")
    ellipsis = [chr(_ELLIPSIS_BASE + i) for i in range(n_ellipsis - count, n_ellipsis)]
    return list(head) + ellipsis + list(tail)


def parse_subscripts(subscripts: str, shapes: list[tuple[int, ...]]):
    """(labels per operand, output labels) for `subscripts` over operands of `shapes`."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {subscripts!r} has {len(terms)} operand terms but "
                         f"{len(shapes)} operands were given")
    n_ellipsis = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            named = len(term.replace("...", ""))
            n_ellipsis = max(n_ellipsis, len(shape) - named)
    labels = [_split_term(t, len(s), n_ellipsis, f"operand term {i}")
              for i, (t, s) in enumerate(zip(terms, shapes))]
    every = [label for term in labels for label in term]
    if arrow:
        if "..." not in output and any(ord(c) >= _ELLIPSIS_BASE for c in every):
            ellipsis_sizes = [s for t, shape in zip(labels, shapes) for c, s in zip(t, shape)
                              if ord(c) >= _ELLIPSIS_BASE]
            if any(s != 1 for s in ellipsis_sizes):
                raise ValueError(f"einsum: output {output!r} must keep the '...' dimensions")
        out = _split_term(output, None, n_ellipsis, "the output")
        for label in out:
            if label not in every:
                raise ValueError(f"einsum: output label {label!r} appears in no operand")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output {output!r} repeats a label")
    else:
        ellipsis = [chr(_ELLIPSIS_BASE + i) for i in range(n_ellipsis)]
        out = ellipsis + sorted(c for c in set(every)
                                if every.count(c) == 1 and ord(c) < _ELLIPSIS_BASE)
    return labels, out


def _label_sizes(labels: list[list[str]], shapes) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for term, shape in zip(labels, shapes):
        for label, size in zip(term, shape):
            known = sizes.get(label, 1)
            if size != known and 1 not in (size, known):
                name = "'...'" if ord(label) >= _ELLIPSIS_BASE else repr(label)
                raise ValueError(f"einsum: label {name} has sizes {known} and {size}")
            sizes[label] = max(known, size)
    return sizes


# -- single-operand steps -----------------------------------------------------------------
def _drop_broadcast_ones(op: _Operand, sizes: dict[str, int]) -> _Operand:
    """Size-1 dimensions whose label is larger elsewhere broadcast: squeeze them."""
    drop = [d for d, label in enumerate(op.labels)
            if op.array.shape[d] == 1 and sizes[label] > 1]
    if not drop:
        return op
    array = lax.squeeze(op.array, tuple(drop))
    return _Operand([lb for d, lb in enumerate(op.labels) if d not in drop], array)


def _take_diagonals(op: _Operand) -> _Operand:
    """Repeated labels select the diagonal: mask off-diagonal entries, sum them away."""
    while True:
        repeated = next((lb for lb in op.labels if op.labels.count(lb) > 1), None)
        if repeated is None:
            return op
        dims = [d for d, lb in enumerate(op.labels) if lb == repeated]
        x = op.array
        first = lax.broadcasted_iota(np.int32, x.shape, dims[0])
        mask = None
        for d in dims[1:]:
            same = lax.eq(first, lax.broadcasted_iota(np.int32, x.shape, d))
            mask = same if mask is None else lax.bitwise_and(mask, same)
        zero = lax.broadcast_in_dim(as_array(0, x.dtype), x.shape, ())
        x = lax.reduce_sum(lax.select(mask, x, zero), tuple(dims[1:]))
        op = _Operand([lb for d, lb in enumerate(op.labels) if d not in dims[1:]], x)


def _sum_labels(op: _Operand, labels: set[str]) -> _Operand:
    dims = tuple(d for d, lb in enumerate(op.labels) if lb in labels)
    if not dims:
        return op
    return _Operand([lb for lb in op.labels if lb not in labels],
                    lax.reduce_sum(op.array, dims))


def _sum_private_labels(ops: list[_Operand], output: list[str]) -> list[_Operand]:
    """Sum away each operand's labels that nothing else needs."""
    result = []
    for i, op in enumerate(ops):
        needed = set(output).union(*(o.labels for j, o in enumerate(ops) if j != i))
        result.append(_sum_labels(op, set(op.labels) - needed))
    return result


# -- contraction --------------------------------------------------------------------------
def _contract_pair(a: _Operand, b: _Operand, needed: set[str], precision,
                   preferred) -> _Operand:
    shared = [lb for lb in a.labels if lb in b.labels]
    batch = [lb for lb in shared if lb in needed]
    contracting = [lb for lb in shared if lb not in needed]
    dims = ((tuple(a.labels.index(lb) for lb in contracting),
             tuple(b.labels.index(lb) for lb in contracting)),
            (tuple(a.labels.index(lb) for lb in batch),
             tuple(b.labels.index(lb) for lb in batch)))
    array = lax.dot_general(a.array, b.array, dims, precision=precision,
                            preferred_element_type=preferred)
    labels = batch + [lb for lb in a.labels if lb not in shared] \
        + [lb for lb in b.labels if lb not in shared]
    return _Operand(labels, array)


def _result_size(a: _Operand, b: _Operand, needed: set[str], sizes) -> int:
    labels = (set(a.labels) | set(b.labels)) - (set(a.labels) & set(b.labels) - needed)
    return math.prod(sizes[lb] for lb in labels)


def _greedy_pair(ops: list[_Operand], output: list[str], sizes) -> tuple[int, int]:
    best = None
    for i, j in itertools.combinations(range(len(ops)), 2):
        needed = set(output).union(*(o.labels for k, o in enumerate(ops) if k not in (i, j)))
        cost = _result_size(ops[i], ops[j], needed, sizes)
        if best is None or cost < best[0]:
            best = (cost, (i, j))
    return best[1]


def _plan(optimize, count: int) -> list[tuple[int, ...]] | None:
    """An explicit contraction path, or None for the greedy choice."""
    if optimize is False or optimize is None:
        return [(0, 1)] * (count - 1)
    if isinstance(optimize, (list, tuple)):
        path = [p for p in optimize if p != "einsum_path"]
        return [tuple(int(i) for i in step) for step in path]
    return None


def _contract_all(ops, output, sizes, optimize, precision, preferred):
    plan = _plan(optimize, len(ops))
    steps: list[tuple[int, ...]] = []
    while len(ops) > 1:
        ops = _sum_private_labels(ops, output)
        if plan is not None and plan:
            step = tuple(sorted(plan.pop(0), reverse=True))
        elif plan is not None:
            raise ValueError("einsum: the optimize path ends before every operand is contracted")
        else:
            step = tuple(sorted(_greedy_pair(ops, output, sizes), reverse=True))
        steps.append(tuple(sorted(step)))
        picked = [ops.pop(i) for i in step][::-1]
        while len(picked) > 1:
            rest = set(output).union(*(o.labels for o in ops + picked[2:]))
            picked = [_contract_pair(picked[0], picked[1], rest, precision, preferred),
                      *picked[2:]]
        ops.append(picked[0])
    return ops[0], steps


def _prepare(subscripts, operands):
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_to_subscripts((subscripts, *operands))
    if not operands:
        raise ValueError("einsum needs at least one operand")
    arrays = [as_array(o) for o in operands]
    labels, output = parse_subscripts(subscripts, [a.shape for a in arrays])
    sizes = _label_sizes(labels, [a.shape for a in arrays])
    return arrays, labels, output, sizes


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None) -> Array:
    """Einstein summation over `operands` as `subscripts` spells it, e.g.
    'ij,jk->ik', 'bij,bjk', '...ii->...i', or einsum(x, [0, 1], y, [1, 2]).

    `optimize` may be False (left to right), a path (list of operand-index
    tuples, as einsum_path gives), or anything else for the greedy order.
    """
    if out is not None:
        raise NotImplementedError("einsum: the out argument is not supported (arrays are "
                                  "immutable)")
    arrays, labels, output, sizes = _prepare(subscripts, operands)
    dtype, weak = result_dtype_and_weak(*arrays)
    arrays = promote_dtypes(*arrays)
    boolean = dtype == np.bool_
    if boolean:  # sums of bools are ors: count in int32, test for nonzero at the end
        arrays = [lax.convert_element_type(a, np.int32) for a in arrays]
    ops = [_take_diagonals(_drop_broadcast_ones(_Operand(list(lb), a), sizes))
           for lb, a in zip(labels, arrays)]
    result, _ = _contract_all(ops, output, sizes, optimize, precision, preferred_element_type)
    result = _sum_labels(result, set(result.labels) - set(output))
    array = result.array
    missing = [lb for lb in output if lb not in result.labels]
    if missing:  # size-1 output labels squeezed everywhere come back as size 1
        array = reshape_exact(array, array.shape + (1,) * len(missing))
        result = _Operand(result.labels + missing, array)
    perm = tuple(result.labels.index(lb) for lb in output)
    if perm != tuple(range(len(perm))):
        array = lax.transpose(array, perm)
    if boolean:
        return lax.ne(array, lax.broadcast_in_dim(as_array(np.int32(0)), array.shape, ()))
    final = dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    if array.dtype != final:
        array = lax.convert_element_type(array, final)
    return with_weak_type(array, weak and preferred_element_type is None)


def einsum_path(subscripts, /, *operands, optimize="greedy") -> tuple[list, str]:
    """The contraction order einsum would follow, as (path, description); the
    path can be passed back as einsum's `optimize`."""
    arrays, labels, output, sizes = _prepare(subscripts, operands)
    ops = [_Operand(list(lb), a) for lb, a in zip(labels, arrays)]
    path, remaining = [], [list(lb) for lb in labels]
    plan = _plan(optimize, len(ops))
    while len(remaining) > 1:
        if plan:
            step = tuple(sorted(plan.pop(0)))
        else:
            fake = [_Operand(lb, None) for lb in remaining]
            step = _greedy_pair(fake, output, sizes)
        merged = [lb for i in step for lb in remaining[i]]
        for i in sorted(step, reverse=True):
            remaining.pop(i)
        remaining.append(list(dict.fromkeys(merged)))
        path.append(step)
    text = "\n".join(f"  contract {step}" for step in path) or "  no contraction"
    return ["einsum_path", *path], f"einsum path for {len(ops)} operands:\n{text}"
