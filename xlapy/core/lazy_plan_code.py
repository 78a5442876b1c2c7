"""A tape's call plan compiled to one Python function.

A taped step makes every node by matching its call against the plan the tape
holds (`lazy_tape.CallPlan`): each argument checked by kind, the operands
picked, the node and its handle made. Read generically, from the plan's
tuples, that costs ~2 µs a call, most of it the interpreter walking the
checks; an encoder layer's forward makes 62 such calls a step. The plan does
not change once made, so it is written out as straight-line code — the
checks unrolled, the way `collections.namedtuple` and `dataclasses` write
their methods. The code is a factory per structure of plan (the kinds of its
arguments and operands), compiled once; each plan is a closure over its own
positions, leaves, shapes and instruction, so an Adam step's 71 plans take
9 factories, not 71 compiled functions. A plan of a kind this does not
write (a tuple result, a signed zero, an operand built from nested specs)
keeps the generic path, and so does every plan until it
has been used `USES_BEFORE_COMPILING` times.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np

from xlapy.core import lazy_state
from xlapy.core.lazy import LazyArray
from xlapy.core.lazy_graph import Node
from xlapy.core.lazy_tape import CallPlan, static_index

USES_BEFORE_COMPILING = 2
"""Calls of a plan by the generic path before it is compiled: a tape matched
once and dropped writes nothing. (Writing the code of a new structure costs
~150 µs, some 60 generic calls; a plan of a structure written before, ~11.)"""


def compiled(plan: CallPlan):
    """`fast(args, run)` -> the call's handle, or None where an argument is not
    where the tape had it (as `_taped` with `TapeRun.arguments` decides); None
    for a plan this does not write."""
    if plan.result is None or plan.index is not None or any(
            c[0] not in (0, 1, 2, 3, 4, 6, 7) for c in plan.checks):
        return None
    if any(s[0] not in "ac" for s in plan.specs):
        return None
    values: list = []   # the plan's own values, the factory's arguments k0, k1...

    def constant(value) -> str:
        values.append(value)
        return f"k{len(values) - 1}"

    lines = []
    arrays = []     # per array (kinds 0, 1 and 3, alone or in a list), its operand
    fills = []      # (leaf, value's variable) for leaves the run has not gathered yet

    def emit(a: str, check) -> None:
        """The lines checking argument `a` (a variable) against `check`."""
        nonlocal lines
        kind = check[0]
        if kind == 0:   # a pending result of the step, made by node `position`
            _, position, index, weak = check
            index = constant(index)
            lines += [f"n{a} = nodes[{constant(position)}]",
                      f"if getattr({a}, '_node', None) is not n{a} or {a}._index != {index} "
                      f"or {a}.weak_type != {constant(weak)}: return None"]
            arrays.append(f"(n{a}, {index})")
        elif kind == 1:   # a leaf's value
            _, number, type_, weak, shape, dtype = check
            lines.append(f"if type({a}) is not {constant(type_)}: return None")
            if type_ is np.ndarray:
                lines.append(f"v{a} = {a}")
            else:
                lines += [f"v{a} = {a}._value",
                          f"if v{a} is None or {a}.weak_type != {constant(weak)}: return None"]
            number = constant(number)
            lines += [f"if v{a}.shape != {constant(shape)} or v{a}.dtype != "
                      f"{constant(dtype)}: return None",
                      f"h = leaves[{number}]",
                      f"if h is not None and h is not v{a}: return None"]
            fills.append((number, f"v{a}"))
            arrays.append(f"v{a}")
        elif kind == 2:   # a scalar the caller's code passes again (the same object, or equal)
            _, type_, value = check
            c = constant(value)
            lines.append(f"if {a} is not {c} and (type({a}) is not {constant(type_)} "
                         f"or {a} != {c}): return None")
        elif kind == 4:   # a tuple or list of scalars (a shape, axes): equal, of equal types
            _, type_, value, types = check
            c = constant(value)
            seen = f"tuple({a})" if type_ is list else a
            lines.append(f"if {a} is not {c} and (type({a}) is not {constant(type_)} or "
                         f"{seen} != {c} or tuple(map(type, {a})) != {constant(types)}): "
                         "return None")
        elif kind == 6:   # an index of slices and such, spelled with its types
            lines.append(f"if {a} is not {constant(check[2])} and "
                         f"static_index({a}) != {constant(check[1])}: return None")
        elif kind == 7:   # a list or tuple: each element checked as one
            _, type_, parts = check
            names = [f"{a}_{j}" for j in range(len(parts))]
            lines += [f"if type({a}) is not {constant(type_)} or len({a}) != {len(parts)}: "
                      "return None",
                      f"{', '.join(names)}{',' if len(parts) == 1 else ''} = {a}"]
            for name, part in zip(names, parts):
                emit(name, part)
        else:   # an array only the call's signature reads
            _, type_, shape, dtype, weak = check
            lines += [f"if type({a}) is not {constant(type_)} or {a}.shape != "
                      f"{constant(shape)} or {a}.dtype != {constant(dtype)} or "
                      f"getattr({a}, 'weak_type', False) != {constant(weak)} or "
                      f"getattr({a}, '_value', 0) is None and {a}._node is not None: "
                      "return None"]
            arrays.append(a if type_ is np.ndarray else f"{a}.value")

    for i, check in enumerate(plan.checks):
        emit(f"a{i}", check)
    for number, value in fills:   # (after every check, as TapeRun.arguments does)
        lines += [f"if leaves[{number}] is None: leaves[{number}] = {value}",
                  f"elif leaves[{number}] is not {value}: return None"]
    operands = [arrays[s[1]] if s[0] == "a" else constant(s[1]) for s in plan.specs]
    dims, dtype = plan.result
    weak = constant(plan.weak)
    lines += [f"node = Node({constant(plan.instruction)}, [{', '.join(operands)}], {weak}, "
              "next(ORDER))",
              f"made = LazyArray(node, None, {constant(dims)}, {constant(dtype)}, {weak})",
              "node.outputs.append(ref(made))",
              "run.position[node.order] = len(nodes)",
              "nodes.append(node)",
              "log = STATE.log",
              "if log is not None: log.append(node)",
              "return made"]
    count = len(plan.checks)
    unpack = f"{', '.join(f'a{i}' for i in range(count))}{',' if count == 1 else ''} = args"
    source = "\n".join([
        f"def factory({', '.join(f'k{j}' for j in range(len(values)))}):",
        "    def fast(args, run):",
        f"        if len(args) != {count}: return None",
        f"        {unpack}" if count else "        pass",
        "        nodes = run.nodes",
        "        leaves = run.leaves",
        *(f"        {line}" for line in lines),
        "    return fast"])
    return _factory(source, getattr(plan.fn, "__name__", "a call"))(*values)


def _factory(source: str, name: str):
    """The factory `source` defines, compiled once: plans of one structure spell the
    same source (their values are its arguments), and compiling costs ~150 µs."""
    factory = _FACTORIES.get(source)
    if factory is None:
        namespace = dict(_GLOBALS)
        # (named inside the package: a traceback through it is xlapy's, not the user's)
        exec(compile(source, f"{__file__} (call plan of {name})", "exec"), namespace)
        factory = _FACTORIES[source] = namespace["factory"]
        if len(_FACTORIES) > _SIZE:
            _FACTORIES.popitem(last=False)
    return factory


_GLOBALS = {"Node": Node, "LazyArray": LazyArray, "ref": weakref.ref, "static_index": static_index,
            "ORDER": lazy_state.ORDER, "STATE": lazy_state.STATE}
_FACTORIES: OrderedDict[str, object] = OrderedDict()
_SIZE = 1024
