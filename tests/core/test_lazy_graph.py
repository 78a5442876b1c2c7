"""The pending graph's structure key: `spell` flattens a cluster into one tuple
that equal recordings share, and `unspelled` gives back each node's operands,
tuples included, as the module builder reads them."""

from __future__ import annotations

import numpy as np

from xlapy.core.lazy_graph import Node, array_shape, spell, unspelled
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode


def _copy(shape=(2,)):
    s = array_shape(shape, np.float32)
    parameter = HloInstruction(Opcode.PARAMETER, s, name="operand.0", parameter_number=0)
    return HloInstruction(Opcode.COPY, s, [parameter], name="copy")


def _leaf(operand, node, out):
    out += ("p", id(operand) % 7)


def _recording(order_base: int, value):
    copy = _copy()
    a = Node(copy, [value], False, order_base)
    b = Node(copy, [(a, None)], False, order_base + 1)
    c = Node(copy, [((b, None), ((a, 0), value)), value], False, order_base + 5)
    return [a, b, c]


def test_equal_recordings_spell_equal_flat_keys():
    value = np.ones(2, np.float32)
    first, second = spell(_recording(0, value), _leaf), spell(_recording(100, value), _leaf)
    assert first == second and hash(first) == hash(second)
    assert all(not isinstance(item, (tuple, list)) for item in first)   # flat


def test_unspelled_gives_each_nodes_operands_back():
    value = np.ones(2, np.float32)
    nodes = _recording(0, value)
    per_node = unspelled(spell(nodes, _leaf))
    leaf = ("p", id(value) % 7)
    assert [operands for _, operands in per_node] == [
        (leaf,),
        (("n", 0, None),),
        (("t", (("n", 1, None), ("t", (("n", 0, 0), leaf)))), leaf),
    ]
    assert len({signature for signature, _ in per_node}) == 1


def test_a_node_outside_the_cluster_is_a_leaf():
    value = np.ones(2, np.float32)
    a, b, _ = _recording(0, value)
    seen = []
    spell([b], lambda operand, node, out: (seen.append(operand), out.extend(("p", 0))))
    assert seen == [(a, None)]
