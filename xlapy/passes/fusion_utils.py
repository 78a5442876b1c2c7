"""Building and editing `fusion` instructions, printed the way XLA prints them.

A fusion is an instruction `fusion(operands...), kind=kLoop, calls=%fused_computation`
whose fused computation takes one parameter per operand (`param_0`, `param_1`, ...)
and whose root is the fused value, or a `tuple` of values for a multi-output
fusion (its users then read `get-tuple-element`s). The surgery here keeps two
invariants the verifier checks: names unique across the module, and every
computation in a valid order. Fusion operands are kept unique, so each outer
value enters a fused computation through exactly one parameter.

The fusion passes decide *what* to fuse (`fusion_cost`); these functions only
do it:
- `create_fusion`: replace an instruction by a one-instruction fusion;
- `fuse_producer`: pull an operand of a fusion inside (a copy when the operand
  has other users, the instruction itself otherwise);
- `merge_fusions`: inline one fusion into another, keeping the values that
  are still read outside as extra outputs (multi-output fusion);
- `tidy`: the finishing touches XLA's printing shows (parameters first and
  named `param_N`, fused computations right before their caller).

`kind_for` fixes the kind from what a fusion holds: kOutput when a dot or
convolution is its hero, kInput when it holds a reduction, kLoop otherwise.

Fusion contract for emitters (what a backend may rely on): a kOutput fusion
holds exactly one dot/convolution, whose operands are fusion parameters, and
only elementwise ops between it and the root. A reduce inside a fusion that
is not the root (a "reduction diamond" such as softmax's max and sum, or an
epilogue after a reduction) is evaluated once per output element into
kernel-local scratch of the reduce's result size, not once per read.
"""

from __future__ import annotations

from xlapy.hlo.attributes import FusionKind
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, remove, replace_uses, sort
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

INPUT_HEROES = frozenset({Opcode.REDUCE, Opcode.REDUCE_WINDOW})
"""Ops that make a fusion an input fusion: they read many elements per output."""

OUTPUT_HEROES = frozenset({Opcode.DOT, Opcode.CONVOLUTION})
"""Ops that make a fusion an output fusion: the library-grade kernel with an epilogue."""

_EMBEDDING_OPCODES = frozenset({Opcode.WHILE, Opcode.CONDITIONAL, Opcode.CALL})
"""Callers whose callees are ordinary sequential computations (fusion runs inside
them); every other caller (reduce, sort, map, scatter, fusion...) calls a scalar
or fused computation, which fusion leaves alone."""


# -- names ------------------------------------------------------------------------------
class FusionNames:
    """Names unique across a module: XLA's `fusion`, `fusion.1`, ... sequence for new
    fusions, fused computations, parameters and get-tuple-elements, and
    NameUniquer's `base.N` for copies of existing instructions."""

    def __init__(self, module: HloModule):
        self._uniquer = NameUniquer(module)
        self._next: dict[str, int] = {}  # base -> lowest number that may be free

    def fresh(self, base: str) -> str:
        """`base` if unused, else the first unused `base.1`, `base.2`, ..."""
        used = self._uniquer.used
        n = self._next.get(base, 0)
        while (name := f"{base}.{n}" if n else base) in used:
            n += 1
        used.add(name)
        self._next[base] = n + 1
        return name

    def copy_of(self, name: str) -> str:
        """A new name for a copy of the instruction called `name`."""
        return self._uniquer(name)

    def release(self, name: str) -> None:
        """`name` is no longer used (its instruction or computation was removed)."""
        self._uniquer.used.discard(name)
        base, _, number = name.rpartition(".")
        if not (base and number.isdigit()):
            base, number = name, "0"
        if base in self._next:
            self._next[base] = min(self._next[base], int(number))


# -- users, kept current ----------------------------------------------------------------
class UserMap:
    """id(instruction) -> its users (each once, in first-use order) in one computation.

    `create_fusion`, `fuse_producer` and `merge_fusions` keep it current when handed
    one, so a pass does not rebuild the map after every edit."""

    def __init__(self, computation: HloComputation):
        self._users = {key: {id(u): u for u in users}
                       for key, users in computation.users().items()}

    def __call__(self, instruction: HloInstruction) -> list[HloInstruction]:
        return list(self._users.get(id(instruction), {}).values())

    def add(self, operand: HloInstruction, user: HloInstruction) -> None:
        self._users.setdefault(id(operand), {}).setdefault(id(user), user)

    def discard(self, operand: HloInstruction, user: HloInstruction) -> None:
        self._users.get(id(operand), {}).pop(id(user), None)

    def replace(self, operand: HloInstruction, old: HloInstruction,
                new: HloInstruction) -> None:
        """`new` took `old`'s place among the users of `operand`."""
        users = self._users.get(id(operand), {})
        if id(old) in users:
            self._users[id(operand)] = {
                id(u): u for u in (new if u is old else u for u in users.values())}

    def transfer(self, old: HloInstruction, new: HloInstruction) -> None:
        """`new` replaced `old`: it has `old`'s users, and `old` is gone."""
        self._users[id(new)] = self._users.pop(id(old), {})

    def forget(self, instruction: HloInstruction) -> None:
        self._users.pop(id(instruction), None)


# -- queries ----------------------------------------------------------------------------
def fused_computation(fusion: HloInstruction) -> HloComputation:
    """The computation a fusion instruction calls."""
    return fusion.attrs["calls"]


def fused_instructions(fusion: HloInstruction) -> list[HloInstruction]:
    """The fused computation's instructions other than its parameters."""
    return [i for i in fused_computation(fusion).instructions
            if i.opcode is not Opcode.PARAMETER]


def fusion_outputs(fusion: HloInstruction) -> list[HloInstruction]:
    """The fused values a fusion returns: the root, or the root tuple's elements."""
    root = fused_computation(fusion).root_instruction
    return list(root.operands) if root.opcode is Opcode.TUPLE else [root]


def is_multi_output(fusion: HloInstruction) -> bool:
    return fused_computation(fusion).root_instruction.opcode is Opcode.TUPLE


def after_parameters(computation: HloComputation) -> int:
    """The position just after the last parameter: where fused code that reads only
    parameters can go. (Fusions made here keep their parameters first; a parsed
    fusion may interleave them.)"""
    last = -1
    for n, instruction in enumerate(computation.instructions):
        if instruction.opcode is Opcode.PARAMETER:
            last = n
    return last + 1


def kind_for(computation: HloComputation) -> FusionKind:
    """kOutput around a dot/convolution hero, kInput around reductions, else kLoop."""
    opcodes = {i.opcode for i in computation.instructions}
    if opcodes & OUTPUT_HEROES:
        return FusionKind.OUTPUT
    if opcodes & INPUT_HEROES:
        return FusionKind.INPUT
    return FusionKind.LOOP


def fusible_computations(module: HloModule) -> list[HloComputation]:
    """The computations fusion works in: the entry and the bodies, conditions and
    branches of control flow reachable from it (XLA's non-fusion computations), but
    not fused computations nor scalar ones such as reducers and comparators."""
    if module.entry_computation is None:
        return []
    found, stack = [module.entry_computation], [module.entry_computation]
    while stack:
        for instruction in stack.pop().instructions:
            if instruction.opcode not in _EMBEDDING_OPCODES:
                continue
            for callee in instruction.called_computations:
                if all(callee is not c for c in found):
                    found.append(callee)
                    stack.append(callee)
    return [c for c in module.computations if any(c is f for f in found)]


# -- creating and growing fusions -------------------------------------------------------
def create_fusion(consumer: HloInstruction, names: FusionNames,
                  users: UserMap | None = None) -> HloInstruction:
    """Replace `consumer` by `fusion(unique operands), calls=%fused_computation` whose
    fused computation holds `consumer` itself (moved, so its name stays)."""
    outer = consumer.parent
    operands = list({id(op): op for op in consumer.operands}.values())
    params = [_parameter(n, op.shape, names) for n, op in enumerate(operands)]
    by_operand = {id(op): p for op, p in zip(operands, params)}
    old_operands = consumer.operands
    consumer.operands = [by_operand[id(op)] for op in old_operands]
    computation = HloComputation(names.fresh("fused_computation"), params + [consumer],
                                 root=consumer)
    _add_before(outer.parent, computation, outer)
    fusion = HloInstruction(Opcode.FUSION, consumer.shape, operands,
                            {"kind": kind_for(computation), "calls": computation},
                            name=names.fresh("fusion"))
    fusion.parent = outer
    outer.instructions[outer.instructions.index(consumer)] = fusion
    if users is None:
        replace_uses(outer, consumer, fusion)
    else:
        _replace_in(users(consumer), consumer, fusion)
    if outer.root_instruction is consumer:
        outer.root_instruction = fusion
    consumer.parent = computation
    if users is not None:
        users.transfer(consumer, fusion)
        for op in operands:
            users.replace(op, consumer, fusion)
    return fusion


def fuse_producer(fusion: HloInstruction, producer: HloInstruction, names: FusionNames,
                  users: UserMap | None = None) -> HloInstruction:
    """Pull `producer`, an operand of `fusion`, into the fused computation and return
    the fused instruction. A producer with no other user (and not the root) moves
    inside; otherwise a copy goes inside and the producer stays for its other users."""
    outer = fusion.parent
    computation = fused_computation(fusion)
    param = fused_parameter(fusion, producer)
    others = [u for u in users(producer) if u is not fusion] if users is not None else \
        [i for i in outer.instructions if i is not fusion and producer in i.operands]
    moving = not others and outer.root_instruction is not producer
    original = list(producer.operands)
    operands = [parameter_for(fusion, op, names) for op in original]
    if moving:
        inner = producer
        outer.instructions.remove(producer)  # by identity: instructions define no __eq__
        inner.operands = operands
    else:
        inner = HloInstruction(producer.opcode, producer.shape, operands, dict(producer.attrs),
                               name=names.copy_of(producer.name), literal=producer.literal)
    inner.parent = computation
    computation.instructions.insert(after_parameters(computation), inner)
    replace_uses(computation, param, inner)
    _remove_parameter(fusion, param, names)
    if users is not None:
        users.discard(producer, fusion)
        for op in original:
            users.add(op, fusion)
            if moving:
                users.discard(op, producer)
        if moving:
            users.forget(producer)
    _update_kind(fusion, inner)
    return inner


def fused_parameter(fusion: HloInstruction, operand: HloInstruction) -> HloInstruction:
    """The fused computation's parameter that receives `operand`."""
    return fused_computation(fusion).parameter(_index(fusion.operands, operand))


def parameter_for(fusion: HloInstruction, operand: HloInstruction,
                  names: FusionNames) -> HloInstruction:
    """The parameter receiving `operand`, adding `operand` to the fusion if needed."""
    if any(op is operand for op in fusion.operands):
        return fused_parameter(fusion, operand)
    computation = fused_computation(fusion)
    param = _parameter(len(fusion.operands), operand.shape, names)
    param.parent = computation
    computation.instructions.insert(after_parameters(computation), param)
    fusion.operands.append(operand)
    return param


def _update_kind(fusion: HloInstruction, added: HloInstruction) -> None:
    """`refresh_kind` after `added` joined: only a hero can change the kind."""
    kind = fusion.attrs.get("kind")
    if kind is FusionKind.CUSTOM:
        return
    if added.opcode in OUTPUT_HEROES:
        fusion.attrs["kind"] = FusionKind.OUTPUT
    elif added.opcode in INPUT_HEROES and kind is FusionKind.LOOP:
        fusion.attrs["kind"] = FusionKind.INPUT


def refresh_kind(fusion: HloInstruction) -> None:
    """Set the kind from the fused computation's contents (kCustom is left alone)."""
    if fusion.attrs.get("kind") is not FusionKind.CUSTOM:
        fusion.attrs["kind"] = kind_for(fused_computation(fusion))


# -- multi-output fusion ----------------------------------------------------------------
def merge_fusions(target: HloInstruction, source: HloInstruction, names: FusionNames,
                  users: UserMap | None = None) -> None:
    """Inline fusion `source` into fusion `target` (same computation).

    Wherever `target` read a value of `source` it now uses the fused value; the
    values of `source` still read elsewhere become extra outputs of `target`
    (its root becomes a tuple), read through get-tuple-element. The caller
    guarantees no cycle: no operand of `target` may depend on `source` except
    through `source`'s own values. `users`, when given, is kept current.
    """
    outer = target.parent
    users = users if users is not None else UserMap(outer)
    multi = is_multi_output(source)
    before = list(target.operands)
    values = _inline(target, source, names)
    _update_operand_users(users, target, before, source)
    if multi:
        gtes = [g for g in users(source) if g.opcode is Opcode.GET_TUPLE_ELEMENT]
        live = [g for g in gtes if users(g) or outer.root_instruction is g]
        needed = sorted({g.attrs["index"] for g in live})
    else:
        gtes, live = [], []
        readers = [u for u in users(source) if u is not target]
        needed = [0] if readers or outer.root_instruction is source else []
    new_index: dict[int, int] = {}
    if needed:
        first = _make_multi_output(target, names, users)
        for offset, k in enumerate(needed):
            _add_output(target, values[k])
            new_index[k] = first + offset
    for g in live:
        g.operands = [target]
        g.attrs["index"] = new_index[g.attrs["index"]]
        users.add(target, g)
    if needed and not multi:
        gte = _get_tuple_element(target, new_index[0], names)
        _insert_after_outputs(outer, target, gte)
        _redirect(outer, users, source, gte, readers)
    for dead in [source] + [g for g in gtes if all(g is not x for x in live)]:
        outer.instructions.remove(dead)
        dead.parent = None
        users.forget(dead)
        names.release(dead.name)
    _drop_computation(outer.parent, fused_computation(source), names)
    refresh_kind(target)
    moved = [target] + users(target)
    moved += [r for g in users(target) if g.opcode is Opcode.GET_TUPLE_ELEMENT for r in users(g)]
    if not _ordered(outer, moved):
        sort(outer)


def _ordered(computation: HloComputation, instructions: list[HloInstruction]) -> bool:
    """Whether each of `instructions` comes after its operands."""
    position = {id(i): n for n, i in enumerate(computation.instructions)}
    return all(position[id(op)] < position[id(i)] for i in instructions for op in i.operands)


def _update_operand_users(users: UserMap, target: HloInstruction,
                          before: list[HloInstruction], source: HloInstruction) -> None:
    """`target`'s operands went from `before` to its current ones, taking `source`'s."""
    now = {id(op) for op in target.operands}
    for op in before:
        if id(op) not in now:
            users.discard(op, target)
    for op in target.operands:
        users.add(op, target)
    for op in source.operands:
        users.discard(op, source)


def _redirect(outer: HloComputation, users: UserMap, old: HloInstruction,
              new: HloInstruction, readers: list[HloInstruction]) -> None:
    """`readers` of `old` (and the computation's result) now read `new`."""
    _replace_in(readers, old, new)
    for reader in readers:
        users.add(new, reader)
    if outer.root_instruction is old:
        outer.root_instruction = new
    users.add(new.operands[0], new)


def _inline(target: HloInstruction, source: HloInstruction,
            names: FusionNames) -> list[HloInstruction]:
    """Move `source`'s fused instructions into `target`'s computation; return the
    inner values of `source`'s outputs. Parameters of `target` that received a
    value of `source` are replaced by that value."""
    inner = fused_computation(target)
    source_computation = fused_computation(source)
    mapping: dict[int, HloInstruction] = {}
    for param in source_computation.parameters:
        operand = source.operands[param.parameter_number]
        mapping[id(param)] = parameter_for(target, operand, names)
        names.release(param.name)
    source_root = source_computation.root_instruction
    body = [i for i in source_computation.instructions if i.opcode is not Opcode.PARAMETER
            and not (i is source_root and i.opcode is Opcode.TUPLE)]
    for instruction in body:
        instruction.operands = [mapping.get(id(op), op) for op in instruction.operands]
        instruction.parent = inner
    interleaved = after_parameters(inner) != inner.num_parameters  # a parsed fusion
    at = after_parameters(inner)  # the body reads only parameters and itself
    inner.instructions[at:at] = body
    if source_root.opcode is Opcode.TUPLE:
        names.release(source_root.name)
        outputs = list(source_root.operands)
    else:
        outputs = [source_root]
    values = [mapping.get(id(v), v) for v in outputs]
    for param in list(inner.parameters):
        k = _output_index(target.operands[param.parameter_number], source)
        if k is not None:
            replace_uses(inner, param, values[k])
            _remove_parameter(target, param, names)
    if interleaved:
        sort(inner)
    return values


def _output_index(operand: HloInstruction, source: HloInstruction) -> int | None:
    """Which output of `source` `operand` is (itself, or a get-tuple-element of it)."""
    if operand is source:
        return 0
    if operand.opcode is Opcode.GET_TUPLE_ELEMENT and operand.operands[0] is source:
        return operand.attrs["index"]
    return None


def _make_multi_output(fusion: HloInstruction, names: FusionNames, users: UserMap) -> int:
    """Give `fusion` a tuple root (its readers switch to get-tuple-element 0);
    return the index the next output will take."""
    computation = fused_computation(fusion)
    root = computation.root_instruction
    if root.opcode is Opcode.TUPLE:
        return len(root.operands)
    outer = fusion.parent
    tuple_root = HloInstruction(Opcode.TUPLE, Shape.tuple([root.shape]), [root],
                                name=names.fresh("tuple"))
    computation.add_instruction(tuple_root)
    fusion.shape = tuple_root.shape
    gte = _get_tuple_element(fusion, 0, names)
    _insert_after_outputs(outer, fusion, gte)
    readers = users(fusion)
    users.transfer(fusion, gte)
    _redirect(outer, users, fusion, gte, readers)
    return 1


def _add_output(fusion: HloInstruction, value: HloInstruction) -> None:
    root = fused_computation(fusion).root_instruction
    root.operands.append(value)
    root.shape = Shape.tuple([op.shape for op in root.operands])
    fusion.shape = root.shape


def _get_tuple_element(fusion: HloInstruction, index: int,
                       names: FusionNames) -> HloInstruction:
    shape = fusion.shape.tuple_shapes[index]
    return HloInstruction(Opcode.GET_TUPLE_ELEMENT, shape, [fusion], {"index": index},
                          name=names.fresh("get-tuple-element"))


# -- finishing --------------------------------------------------------------------------
def tidy(module: HloModule, computations: list[HloComputation], names: FusionNames) -> None:
    """XLA's look for the fused `computations`: parameters first, in number order and
    named `param_N`, then the body in post order; then every fused computation
    placed right before the computation whose fusion calls it."""
    for computation in computations:
        if computation.parent is not module:
            continue
        params = computation.parameters
        body = [i for i in computation.post_order() if i.opcode is not Opcode.PARAMETER]
        computation.instructions = params + body
        for param in params:
            names.release(param.name)
            param.name = names.fresh(f"param_{param.parameter_number}")
    place_fused_computations(module)


def place_fused_computations(module: HloModule) -> None:
    """Put each fused computation just before its caller, in the caller's instruction
    order (callees before callers, as XLA prints and the verifier requires)."""
    fused = {id(i.attrs["calls"]) for c in module.computations for i in c.instructions
             if i.opcode is Opcode.FUSION}
    ordered: list[HloComputation] = []
    placed: set[int] = set()
    for computation in module.computations:
        if id(computation) in fused:
            continue
        for instruction in computation.instructions:
            callee = instruction.attrs.get("calls") if instruction.opcode is Opcode.FUSION \
                else None
            if callee is not None and id(callee) not in placed:
                placed.add(id(callee))
                ordered.append(callee)
        ordered.append(computation)
    ordered += [c for c in module.computations if id(c) in fused and id(c) not in placed]
    module.computations = ordered


# -- reachability -----------------------------------------------------------------------
class Reachability:
    """Which instructions of a computation reach which (XLA's HloReachabilityMap), as
    bitsets of ancestors. `alias` and `merge` keep it exact across the edits of
    multi-output fusion; a get-tuple-element it has not seen stands for its tuple."""

    def __init__(self, computation: HloComputation):
        self._bit: dict[int, int] = {}
        self._ancestors: dict[int, int] = {}
        self._held = computation.post_order()  # keeps ids unique while the map lives
        self._position = {id(i): n for n, i in enumerate(self._held)}
        for n, instruction in enumerate(self._held):
            self._bit[id(instruction)] = 1 << n
            mask = 1 << n
            for op in instruction.operands:
                mask |= self._ancestors.get(id(op), 0)
            self._ancestors[id(instruction)] = mask

    def reaches(self, a: HloInstruction, b: HloInstruction) -> bool:
        """True when `b` depends on `a` (or is `a`)."""
        bit = self._bit.get(id(self._known(a)))
        return bit is not None and bool(self._ancestors.get(id(self._known(b)), 0) & bit)

    def connected(self, a: HloInstruction, b: HloInstruction) -> bool:
        return self.reaches(a, b) or self.reaches(b, a)

    def between(self, a: HloInstruction, ends: list[HloInstruction]) -> list[HloInstruction]:
        """The instructions other than `a` on some path from `a` to one of `ends`,
        in post order."""
        bit = self._bit[id(a)]
        to_ends = 0
        for end in ends:
            to_ends |= self._ancestors[id(end)]
        stop = max(self._position[id(end)] for end in ends) + 1
        span = self._held[self._position[id(a)] + 1:stop]
        return [i for i in span if self._ancestors[id(i)] & bit and self._bit[id(i)] & to_ends]

    def alias(self, new: HloInstruction, old: HloInstruction) -> None:
        """`new` replaced `old` (a fusion wrapping it): same dependencies both ways."""
        self._held.append(new)
        self._bit[id(new)] = self._bit[id(old)]
        self._ancestors[id(new)] = self._ancestors[id(old)]

    def merge(self, target: HloInstruction, source: HloInstruction) -> None:
        """`target` absorbed `source`: it depends on what either depended on, and
        whatever depended on either now depends on both."""
        both = self._bit[id(target)] | self._bit[id(source)]
        union = self._ancestors[id(target)] | self._ancestors[id(source)]
        ancestors = self._ancestors
        for key, mask in ancestors.items():
            if mask & both:
                ancestors[key] = mask | union

    def _known(self, instruction: HloInstruction) -> HloInstruction:
        if id(instruction) not in self._bit and instruction.opcode is Opcode.GET_TUPLE_ELEMENT:
            return instruction.operands[0]
        return instruction


# -- helpers ----------------------------------------------------------------------------
def _parameter(number: int, shape: Shape, names: FusionNames) -> HloInstruction:
    return HloInstruction(Opcode.PARAMETER, shape, name=names.fresh(f"param_{number}"),
                          parameter_number=number)


def _remove_parameter(fusion: HloInstruction, param: HloInstruction,
                      names: FusionNames) -> None:
    """Drop a parameter nothing reads any more, with its operand; renumber the rest."""
    computation = fused_computation(fusion)
    number = param.parameter_number
    remove(computation, [param])
    names.release(param.name)
    del fusion.operands[number]
    for other in computation.instructions:
        if other.opcode is Opcode.PARAMETER and other.parameter_number > number:
            other.parameter_number -= 1


def _insert_after_outputs(computation: HloComputation, fusion: HloInstruction,
                          gte: HloInstruction) -> None:
    """Insert `gte` after `fusion` and the get-tuple-elements right behind it."""
    n = _index(computation.instructions, fusion) + 1
    while n < len(computation.instructions) and _output_index(
            computation.instructions[n], fusion) is not None:
        n += 1
    gte.parent = computation
    computation.instructions.insert(n, gte)


def _index(items: list, item) -> int:
    """Position of `item` in `items` (by identity: IR objects define no __eq__)."""
    return items.index(item)


def _replace_in(users: list[HloInstruction], old: HloInstruction,
                new: HloInstruction) -> None:
    """`replace_uses` restricted to the known `users` of `old`."""
    for user in users:
        user.operands = [new if op is old else op for op in user.operands]


def _add_before(module: HloModule, computation: HloComputation,
                caller: HloComputation) -> None:
    """Like `module.add_computation`, but placed before its caller; the name is unique
    already (FusionNames), so the linear name check is skipped."""
    computation.parent = module
    module.computations.insert(_index(module.computations, caller), computation)


def _drop_computation(module: HloModule, computation: HloComputation,
                      names: FusionNames) -> None:
    module.computations = [c for c in module.computations if c is not computation]
    names.release(computation.name)
    computation.parent = None
