"""Pytrees: nested containers of arrays, flattened to leaves and rebuilt.

Tuples, lists, dicts (keys in sorted order, as JAX does), None (no leaves),
namedtuples and registered classes (`register_pytree_node`,
`register_dataclass`) are containers; anything else is a leaf. A TreeDef is
hashable, so it can be part of a compilation cache key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np


class _Registration(NamedTuple):
    flatten: Callable[[Any], tuple[list, Any]]    # node -> (children, aux data)
    unflatten: Callable[[Any, list], Any]         # (aux data, children) -> node


_REGISTRY: dict[type, _Registration] = {
    tuple: _Registration(lambda t: (list(t), None), lambda _, c: tuple(c)),
    list: _Registration(lambda t: (list(t), None), lambda _, c: list(c)),
    dict: _Registration(lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                        lambda keys, c: dict(zip(keys, c))),
    type(None): _Registration(lambda _: ([], None), lambda _, c: None),
}


def register_pytree_node(cls: type, flatten, unflatten) -> None:
    """Make `cls` a container: `flatten(x) -> (children, aux)` and
    `unflatten(aux, children) -> x`; aux must be hashable."""
    _REGISTRY[cls] = _Registration(flatten, unflatten)
    LEAF_TYPES.discard(cls)


def register_dataclass(cls: type) -> type:
    """Register a dataclass whose fields are all children; usable as a decorator."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    register_pytree_node(cls, lambda x: ([getattr(x, n) for n in names], None),
                         lambda _, children: cls(**dict(zip(names, children))))
    return cls


def _registration(x) -> _Registration | None:
    reg = _REGISTRY.get(type(x))
    if reg is None and isinstance(x, tuple) and hasattr(type(x), "_fields"):  # namedtuple
        cls = type(x)
        reg = _Registration(lambda t: (list(t), None), lambda _, c, cls=cls: cls(*c))
    return reg


@dataclasses.dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree: a node type, its aux data and its children's
    structures; `None` node type marks a leaf.

    Structures made by flattening are interned, and each caches its hash: a
    jit call hashes and compares the structure of its arguments every time."""

    node_type: type | None
    aux: Any
    children: tuple[TreeDef, ...]
    _hash: int = dataclasses.field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self):
        try:
            value = hash((self.node_type, self.aux, self.children))
        except TypeError:   # unhashable aux data: hashing the structure fails later
            value = None
        object.__setattr__(self, "_hash", value)

    def __hash__(self) -> int:
        if self._hash is None:
            raise TypeError(f"unhashable pytree structure {self}")
        return self._hash

    def __eq__(self, other) -> bool:   # (interned: usually the very object)
        if self is other:
            return True
        if type(other) is not TreeDef:
            return NotImplemented
        return (self._hash == other._hash and self.node_type == other.node_type
                and self.aux == other.aux and self.children == other.children)

    @property
    def num_leaves(self) -> int:
        if self.node_type is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def unflatten(self, leaves) -> Any:
        it = iter(leaves)
        tree = self._build(it)
        if next(it, _END) is not _END:
            raise ValueError(f"too many leaves for {self}")
        return tree

    def _build(self, it):
        if self.node_type is None:
            try:
                return next(it)
            except StopIteration:
                raise ValueError(f"too few leaves for {self}") from None
        try:   # (leaves taken here: a jit call rebuilds its outputs every time)
            children = [next(it) if c is LEAF else c._build(it) for c in self.children]
        except StopIteration:
            raise ValueError(f"too few leaves for {self}") from None
        kind = self.node_type
        if kind is dict:
            return dict(zip(self.aux, children))
        if kind is tuple:
            return tuple(children)
        return _unflatten_node(kind, self.aux, children)

    def __str__(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(str(c) for c in self.children)
        return f"{self.node_type.__name__}({inner})"


_END = object()
LEAF = TreeDef(None, None, ())


def _unflatten_node(node_type, aux, children):
    reg = _REGISTRY.get(node_type)
    if reg is None:  # a namedtuple
        return node_type(*children)
    return reg.unflatten(aux, children)


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """The leaves of `tree` in order and its structure."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(x, leaves: list, is_leaf) -> TreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    kind = type(x)
    if kind in LEAF_TYPES:
        leaves.append(x)
        return LEAF
    if kind is dict:   # the common containers without the registry's indirection
        keys = tuple(sorted(x))
        return _node(dict, keys, _children([x[k] for k in keys], leaves, is_leaf))
    if kind is tuple or kind is list:
        return _node(kind, None, _children(x, leaves, is_leaf))
    reg = _registration(x)
    if reg is None:
        leaves.append(x)
        return LEAF
    children, aux = reg.flatten(x)
    return _node(kind, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))


def _children(children, leaves: list, is_leaf) -> tuple:
    """The structures of a container's children; leaves of a known type are taken
    here, without a call each (a jit call flattens its arguments every time)."""
    if is_leaf is not None:
        return tuple([_flatten(c, leaves, is_leaf) for c in children])
    out = []
    for c in children:
        if type(c) in LEAF_TYPES:
            leaves.append(c)
            out.append(LEAF)
        else:
            out.append(_flatten(c, leaves, None))
    return tuple(out)


LEAF_TYPES: set[type] = {float, int, bool, complex, np.ndarray}
"""Types known to be leaves (array types add themselves): no registry lookup."""
_INTERNED: dict[tuple, TreeDef] = {}
_MAX_INTERNED = 1 << 16


def _node(kind: type, aux, children: tuple) -> TreeDef:
    """The one TreeDef of this structure (equal structures are then usually the
    same object, which makes comparing them cheap)."""
    key = (kind, aux, children)
    try:
        found = _INTERNED.get(key)
    except TypeError:   # unhashable aux data: a structure of its own
        return TreeDef(kind, aux, children)
    if found is None:
        if len(_INTERNED) >= _MAX_INTERNED:
            _INTERNED.clear()
        found = _INTERNED[key] = TreeDef(kind, aux, children)
    return found


def tree_unflatten(treedef: TreeDef, leaves) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree) -> list:
    return tree_flatten(tree)[0]


def tree_structure(tree) -> TreeDef:
    return tree_flatten(tree)[1]


def tree_map(fn: Callable, tree, *rest) -> Any:
    """`fn` applied leaf by leaf to `tree` and trees of the same structure."""
    leaves, treedef = tree_flatten(tree)
    others = [treedef_leaves(treedef, r) for r in rest]
    return treedef.unflatten([fn(*xs) for xs in zip(leaves, *others)])


def treedef_leaves(treedef: TreeDef, tree) -> list:
    leaves, other = tree_flatten(tree)
    if other != treedef:
        raise ValueError(f"pytree structure {other} does not match {treedef}")
    return leaves
