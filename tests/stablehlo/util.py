"""Helpers the StableHLO tests share: comparing results within float tolerance
(exactly for integers and booleans)."""

from __future__ import annotations

import numpy as np


def assert_same_results(got, want, rtol: float = 1e-5, atol: float = 1e-5, what: str = ""):
    """Equal counts, shapes and dtypes; floats close (NaN equals NaN), the rest exact."""
    got, want = list(got), list(want)
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        where = f"{what} result {i}"
        assert g.shape == w.shape, f"{where}: shape {g.shape}, expected {w.shape}"
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, expected {w.dtype}"
        if w.dtype.kind == "c":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        elif w.dtype.kind == "f" or w.dtype.name in ("bfloat16",):
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)
