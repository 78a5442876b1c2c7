"""The IR objects: wiring, orders, lookups and structural equality."""

import numpy as np
import pytest

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

F32 = Shape.array("f32", (3,))


def small_module(constant=1.0):
    p = HloInstruction(Opcode.PARAMETER, F32, name="p", parameter_number=0)
    c = HloInstruction(Opcode.CONSTANT, Shape.scalar("f32"), name="c",
                       literal=np.array(constant, np.float32))
    b = HloInstruction(Opcode.BROADCAST, F32, [c], {"dimensions": ()}, name="b")
    add = HloInstruction(Opcode.ADD, F32, [p, b], name="add")
    module = HloModule("m")
    module.add_computation(HloComputation("main", [p, c, b, add]), entry=True)
    return module


def test_root_parameters_and_lookups():
    comp = small_module().entry_computation
    assert comp.root_instruction.name == "add"
    assert [p.name for p in comp.parameters] == ["p"] and comp.num_parameters == 1
    assert comp.parameter(0).name == "p" and comp.instruction("c").opcode is Opcode.CONSTANT
    with pytest.raises(IndexError):
        comp.parameter(1)
    with pytest.raises(KeyError):
        comp.instruction("nope")
    assert all(i.parent is comp for i in comp)


def test_post_order_puts_operands_first():
    comp = small_module().entry_computation
    order = [i.name for i in comp.post_order()]
    assert order.index("c") < order.index("b") < order.index("add")
    assert order.index("p") < order.index("add") and len(order) == 4


def test_users():
    comp = small_module().entry_computation
    users = comp.users()
    assert [u.name for u in users[id(comp.instruction("c"))]] == ["b"]
    assert users[id(comp.root_instruction)] == []


def test_structural_equality():
    assert small_module() == small_module()
    assert small_module(1.0) != small_module(2.0)
    other = small_module()
    other.entry_computation.instruction("b").attrs["dimensions"] = (0,)
    assert other != small_module()


def test_called_computations_and_duplicates():
    module = small_module()
    reducer = HloComputation("sum", [])
    r = HloInstruction(Opcode.REDUCE, Shape.scalar("f32"), [], {"to_apply": reducer})
    assert r.called_computations == [reducer]
    cond = HloInstruction(Opcode.CONDITIONAL, F32, [], {"branch_computations": (reducer, reducer)})
    assert cond.called_computations == [reducer, reducer]
    with pytest.raises(ValueError, match="already has a computation"):
        module.add_computation(HloComputation("main"))
