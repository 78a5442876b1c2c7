"""Comparing results with a reference, as XLA's run_hlo_module does: the
largest absolute and relative errors of each output and where they occur,
and whether every element is within the bounds (integers and predicates
exactly; NaN matches NaN)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.hlo.dtypes import PrimitiveType


@dataclass
class ErrorReport:
    """The worst errors of one output against the reference."""

    shape: str
    max_abs_error: float
    max_abs_at: tuple[int, ...]
    max_rel_error: float
    max_rel_at: tuple[int, ...]
    mismatches: int
    elements: int

    @property
    def close(self) -> bool:
        return self.mismatches == 0

    def __str__(self) -> str:
        verdict = "ok" if self.close else f"{self.mismatches} of {self.elements} elements differ"
        return (f"{self.shape}: max abs error {self.max_abs_error:.3g} at "
                f"{list(self.max_abs_at)}, max rel error {self.max_rel_error:.3g} at "
                f"{list(self.max_rel_at)}: {verdict}")


def output_errors(got, want, atol: float, rtol: float) -> ErrorReport:
    """Largest absolute and relative errors of `got` against `want`, and how many
    elements are outside both bounds (integers and predicates: any difference)."""
    got, want = np.asarray(got), np.asarray(want)
    shape = _shape_text(want)
    if got.shape != want.shape:
        return ErrorReport(f"{shape} (got {_shape_text(got)})", np.inf, (), np.inf,
                           (), max(1, want.size), want.size)
    if want.size == 0:
        return ErrorReport(shape, 0.0, (), 0.0, (), 0, 0)
    abs_err, rel_err = _errors(got, want)
    exact = want.dtype.kind in "biu"
    bad = abs_err > 0 if exact else (abs_err > atol) & (rel_err > rtol)
    return ErrorReport(shape, float(abs_err.max()), _argmax(abs_err), float(rel_err.max()),
                       _argmax(rel_err), int(np.count_nonzero(bad)), want.size)


def _shape_text(array: np.ndarray) -> str:
    try:
        element = PrimitiveType.from_numpy(array.dtype).value
    except (KeyError, ValueError, TypeError):
        element = str(array.dtype)
    return f"{element}[{','.join(map(str, array.shape))}]"


def _errors(got: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if want.dtype.kind in "biu":
        g, w = got.astype(np.float64), want.astype(np.float64)
    else:
        g, w = got.astype(np.complex128), want.astype(np.complex128)
    with np.errstate(all="ignore"):
        abs_err = np.abs(g - w)
        rel_err = np.where(abs_err == 0, 0.0, abs_err / np.abs(w))
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(g) & (g == w)
    abs_err = np.where(both_nan | same_inf, 0.0, np.where(np.isnan(abs_err), np.inf, abs_err))
    rel_err = np.where(both_nan | same_inf, 0.0, np.where(np.isnan(rel_err), np.inf, rel_err))
    return abs_err, rel_err


def _argmax(values: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(values)), values.shape))


def leaves(value, index=()) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, index + (i,))]
    return [(index, value)]


def index_text(index: tuple[int, ...]) -> str:
    return ".".join(str(i) for i in index)


def compare(results, expected, atol: float, rtol: float) -> bool:
    """True when every leaf agrees within the bounds (NaNs equal, ints exact)."""
    got, want = leaves(results), leaves(expected)
    return len(got) == len(want) and all(
        output_errors(g, w, atol, rtol).close for (_, g), (_, w) in zip(got, want))
