"""Pytrees: flatten/unflatten round trips and hashable structures."""

import collections
import dataclasses

import pytest

from xlapy.core.pytree import (
    register_dataclass,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

Point = collections.namedtuple("Point", "x y")


@register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


@pytest.mark.parametrize("tree", [
    1, (1, 2), [1, [2, 3]], {"b": 1, "a": (2, None)}, None, Point(1, (2, 3)),
    Params(w=[1, 2], b={"k": 3}), (), {"x": []},
])
def test_round_trip(tree):
    leaves, treedef = tree_flatten(tree)
    assert tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves)
    hash(treedef)


def test_dict_leaves_in_sorted_key_order():
    assert tree_leaves({"b": 2, "a": 1, "c": 3}) == [1, 2, 3]


def test_structures_compare():
    assert tree_structure((1, [2])) == tree_structure((5, [6]))
    assert tree_structure((1, [2])) != tree_structure((1, (2,)))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))


def test_tree_map_over_several_trees():
    assert tree_map(lambda a, b: a + b, {"x": 1, "y": (2,)}, {"x": 10, "y": (20,)}) == \
        {"x": 11, "y": (22,)}
    with pytest.raises(ValueError, match="does not match"):
        tree_map(lambda a, b: a, (1, 2), (1,))


def test_wrong_leaf_count():
    _, treedef = tree_flatten((1, 2))
    with pytest.raises(ValueError, match="too few"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match="too many"):
        treedef.unflatten([1, 2, 3])
