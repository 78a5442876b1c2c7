"""Random JAX programs, the differential campaign's programs against real XLA.

A program is a list of steps over a pool of values, each step one operation
from the table `OPS` (elementwise ops of every dtype, broadcasting,
conversions, slicing, dynamic slices, gathers and scatters with
out-of-range indices, reductions, dots, convolutions, pooling, sorts and
top-k, loops and conditionals with data-dependent trip counts and
predicates, `jax.random`). Generation runs each step eagerly on the
program's inputs, so every value's dtype and shape is known and a step whose
result is not tame (infinities, magnitudes a float type cannot carry
through the rest of the chain) is drawn again: the campaign compares
numbers, and a chaotic program only measures rounding.

The program is then a plain function of its inputs (`JaxProgram.function`),
which JAX lowers to HLO twice (unoptimised, and optimised by XLA's CPU
compiler) and runs for the expected results. Seed-driven: `generate(seed)`
is the same program in every process (`describe()` prints it).

JAX is imported here, and only here: the campaign's parent process
generates; xlapy runs the texts in workers that never import JAX.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xlapy.fuzz.compare import TOLERANCE
from xlapy.fuzz.jax_ops import OPS, Op, kind, tame

DTYPES = ("float32", "float32", "float64", "float16", "bfloat16", "int32", "int32", "int64",
          "int8", "uint8", "uint32", "int16", "uint16", "uint64", "bool", "complex64")


@dataclass
class Step:
    """One operation: `OPS[op]` applied to pool values `inputs` with `params`."""

    op: str
    inputs: tuple[int, ...]
    params: dict = field(default_factory=dict)


@dataclass
class JaxProgram:
    seed: int
    arguments: list          # NumPy arrays; the last is a u32[2] key when `keyed`
    steps: list[Step]
    outputs: list[int]
    keyed: bool = False

    def function(self):
        """The program as a function of its arguments (what JAX traces)."""
        steps, outputs, count = self.steps, self.outputs, len(self.arguments)
        keyed = self.keyed

        def program(*args):
            pool = list(args[:count - 1] if keyed else args)
            key = jax.random.wrap_key_data(args[-1]) if keyed else None
            for step in steps:
                values = [pool[i] for i in step.inputs]
                pool.extend(OPS[step.op].apply(key, values, step.params))
            return tuple(pool[i] for i in outputs)
        return program

    def describe(self) -> str:
        """A readable listing: inputs, one line per step, outputs."""
        lines = [f"# jax program {self.seed}"]
        data = self.arguments[:-1] if self.keyed else self.arguments
        lines += [f"v{i} = input {a.dtype}{list(a.shape)}" for i, a in enumerate(data)]
        if self.keyed:
            lines.append("key = input uint32[2] (threefry key data)")
        number = len(data)
        for step in self.steps:
            args = ", ".join(f"v{i}" for i in step.inputs)
            made = OPS[step.op].results
            names = ", ".join(f"v{number + k}" for k in range(made))
            number += made
            lines.append(f"{names} = {step.op}({args}{', ' if args and step.params else ''}"
                         f"{', '.join(f'{k}={v!r}' for k, v in step.params.items())})")
        lines.append("return " + ", ".join(f"v{i}" for i in self.outputs))
        return "\n".join(lines)


class _Generator:
    """Draws one program: the pool holds concrete values (NumPy), so every step's
    operands are chosen knowing their dtypes and shapes."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.pool: list[np.ndarray] = []
        self.exact: list[bool] = []
        """Per pool value: computed only by exact ops from inputs (see jax_ops)."""
        self.steps: list[Step] = []
        self.key = None

    def input(self, dtype: str, shape: tuple) -> np.ndarray:
        rng = self.rng
        if dtype == "bool":
            return rng.random(shape) < 0.5
        if jnp.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            if rng.random() < 0.3:   # anywhere in the range: overflow, sign, shifts
                return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
            low = max(int(info.min), -8)
            return rng.integers(low, 9, size=shape).astype(dtype)
        values = rng.standard_normal(shape) * (4.0 if rng.random() < 0.3 else 1.0)
        if rng.random() < 0.1 and values.size:
            values.flat[rng.integers(values.size)] = rng.choice([0.0, -0.0, 0.5, -2.5])
        if dtype == "complex64":
            values = values + 1j * rng.standard_normal(shape)
            return values.astype(np.complex64)
        return np.asarray(jnp.asarray(values, dtype=dtype))

    def shape(self) -> tuple:
        rng = self.rng
        rank = int(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4], p=None))
        dims = [int(rng.integers(1, 7)) for _ in range(rank)]
        if rank and rng.random() < 0.12:          # vector loops and their remainders
            dims[-1] = int(rng.choice([17, 33, 100, 257]))
        if rank >= 2 and rng.random() < 0.03:     # the parallel paths
            dims[0] = int(rng.choice([300, 1000]))
        if rank and rng.random() < 0.02:
            dims[int(rng.integers(rank))] = 0     # empty
        return tuple(dims)

    def build(self) -> JaxProgram:
        rng = self.rng
        main = str(rng.choice(DTYPES))
        base = self.shape()
        for _ in range(int(rng.integers(1, 4))):
            dtype = main if rng.random() < 0.7 else str(rng.choice(DTYPES))
            shape = base if rng.random() < 0.7 else self.shape()
            self.pool.append(self.input(dtype, shape))
        arguments = list(self.pool)
        self.exact = [True] * len(self.pool)
        keyed = rng.random() < 0.15
        if keyed:
            self.key = jax.random.key(int(rng.integers(1 << 31)))
            arguments.append(np.asarray(jax.random.key_data(self.key)))
        names = [name for name, op in OPS.items() if keyed or not op.random]
        weights = np.array([OPS[n].weight for n in names], np.float64)
        for _ in range(int(rng.integers(2, 9))):
            for _attempt in range(12):
                if self.try_step(OPS[names[rng.choice(len(names), p=weights / weights.sum())]],
                                 names):
                    break
        outputs = list(dict.fromkeys([len(self.pool) - 1] + [
            int(i) for i in rng.integers(len(self.pool), size=2)]))
        outputs = outputs[:int(rng.integers(1, len(outputs) + 1))]
        return JaxProgram(self.seed, arguments, self.steps, outputs, keyed)

    def try_step(self, op: Op, names) -> bool:
        chosen = op.pick(self.rng, self.pool)
        if chosen is None:
            return False
        inputs, params = chosen
        # integers are exact by construction: only discrete ops of exact floats make them
        exact = all(self.exact[i] or kind(self.pool[i]) not in ("float", "complex")
                    for i in inputs)
        if op.is_discrete(params) and not exact:
            return False   # one ULP of difference would change an integer result
        try:
            with jax.numpy_dtype_promotion("standard"):
                results = op.apply(self.key, [jnp.asarray(self.pool[i]) for i in inputs],
                                   params)
            results = [np.asarray(r) for r in results]
        except Exception:  # noqa: BLE001 - a combination the op does not take: draw again
            return False
        if not all(tame(r) for r in results) or any(r.size > 1 << 21 for r in results):
            return False
        if not exact and _widens([self.pool[i] for i in inputs], results):
            return False
        self.pool.extend(results)
        self.exact.extend([exact and op.is_exact(params)] * len(results))
        self.steps.append(Step(op.name, tuple(inputs), params))
        return True


def _widens(operands: list, results: list) -> bool:
    """Whether a result of a tighter float tolerance is made from a rounded
    operand of a looser one (f32 -> f64, bf16 -> f16): it would carry the
    narrow type's rounding under the wide type's tolerance (program 5056)."""
    loosest = max((TOLERANCE.get(o.dtype.name, 0.0) for o in operands), default=0.0)
    return any(TOLERANCE.get(r.dtype.name, loosest) < loosest for r in results)


def jax_context() -> contextlib.ExitStack:
    """JAX with 64-bit types, on the CPU, for this module's work only: a global
    switch would change every other JAX user in the process (tests included)."""
    stack = contextlib.ExitStack()
    stack.enter_context(jax.enable_x64(True))
    stack.enter_context(jax.default_device(jax.devices("cpu")[0]))
    return stack


def generate(seed: int) -> JaxProgram:
    """Program number `seed` (the same in every process)."""
    with jax_context():
        return _Generator(seed).build()


def lower(program: JaxProgram) -> dict:
    """{'unoptimized', 'optimized'} HLO texts and the 'expected' results from JAX."""
    with jax_context():
        return _lower(program)


def _lower(program: JaxProgram) -> dict:
    fn = jax.jit(program.function(), keep_unused=True)
    lowered = fn.lower(*program.arguments)
    expected = jax.tree_util.tree_leaves(fn(*program.arguments))
    return {"unoptimized": lowered.as_text(dialect="hlo"),
            "optimized": optimized_text(lowered.compile()),
            "expected": [np.asarray(e) for e in expected]}


def eager_expected(program: JaxProgram) -> list:
    """JAX's results op by op (`disable_jit`: every operation compiled alone, so no
    optimisation across operations), a second opinion on what a program computes."""
    with jax_context(), jax.disable_jit():
        results = program.function()(*[jnp.asarray(a) for a in program.arguments])
    return [np.asarray(r) for r in jax.tree_util.tree_leaves(results)]


def optimized_text(compiled) -> str:
    """XLA's optimised module with every constant printed (`as_text()` elides big
    ones as `{...}`, which a parser can only fill with made-up values)."""
    from jaxlib import _hlo  # optional: JAX, the campaign's oracle

    options = _hlo.HloPrintOptions()
    options.print_large_constants = True
    return compiled.runtime_executable().hlo_modules()[0].to_string(options)


__all__ = ["JaxProgram", "Step", "generate", "lower", "lax"]
