"""Deterministic fake arguments for a module, as XLA's run_hlo_module makes them."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.shape import Shape


def fake_argument(shape: Shape, rng: np.random.Generator):
    """A random value of `shape`: small integers, bools, or normal floats.

    Integers stay in [0, 8) so that values used as indices are mostly in bounds.
    """
    if shape.is_tuple:
        return tuple(fake_argument(s, rng) for s in shape.tuple_shapes)
    element = shape.element_type
    if element.is_pred:
        return rng.random(shape.dimensions) < 0.5
    if element.is_integral:
        return rng.integers(0, 8, size=shape.dimensions).astype(shape.dtype)
    if element.is_complex:
        values = rng.standard_normal(shape.dimensions) + 1j * rng.standard_normal(shape.dimensions)
        return values.astype(shape.dtype)
    return rng.standard_normal(shape.dimensions).astype(shape.dtype)


def fake_arguments(module, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [fake_argument(p.shape, rng) for p in module.entry_computation.parameters]
