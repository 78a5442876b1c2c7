"""Collective modules written by JAX/XLA (tests/distributed/jax_modules/, made by
make_jax_modules.py), run in each process on the interpreter and the CPU
backend, against JAX's own outputs on this process's device.

Usage: jax_modules.py [--only NAME,...] [--skip NAME,...] [--backends b1,b2]
(NAME without _nN). Prints `FAIL <rank> <fixture> <backend>: <error>` for each
fixture that differs, and `PASS <rank>` when every fixture it ran held.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import traceback

import numpy as np

import xlapy
from xlapy import distributed

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "jax_modules"


def arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--skip", default="")
    parser.add_argument("--backends", default="interpreter,cpu")
    return parser.parse_args()


def fixtures(n: int, only: set[str], skip: set[str]) -> list[pathlib.Path]:
    """The job size's modules, by name without the _nN suffix."""
    suffix = f"_n{n}"
    paths = sorted(FIXTURES.glob(f"*{suffix}.hlo"))
    names = {p: p.name[:-len(suffix) - len(".hlo")] for p in paths}
    return [p for p in paths if (not only or names[p] in only) and names[p] not in skip]


def loaded(path: pathlib.Path, rank: int) -> tuple[str, list, list]:
    """The module's text, this device's parameters and JAX's results on it."""
    data = np.load(path.with_suffix(".npz"))
    def of(kind):
        count = sum(1 for key in data.files if key.startswith(f"{kind}{rank}_"))
        return [data[f"{kind}{rank}_{k}"] for k in range(count)]
    return path.read_text(), of("in"), of("out")


def compare(got: list, want: list) -> None:
    assert len(got) == len(want), f"{len(got)} results, JAX has {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), \
            f"result {k}: {g.dtype}{list(g.shape)}, JAX {w.dtype}{list(w.shape)}"
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"result {k}")


def main() -> int:
    args = arguments()
    distributed.initialize()
    rank, n = distributed.process_index(), distributed.process_count()
    only = set(filter(None, args.only.split(",")))
    skip = set(filter(None, args.skip.split(",")))
    paths = fixtures(n, only, skip)
    assert paths, f"no fixture for {n} processes in {FIXTURES} (only={only})"
    failures = 0
    for path in paths:
        text, inputs, want = loaded(path, rank)
        for backend in args.backends.split(","):
            try:
                compare(xlapy.execute(text, inputs, backend=backend), want)
            except Exception as error:  # noqa: BLE001 - every fixture reports, then the job fails
                failures += 1
                detail = "".join(traceback.format_exception_only(error)).strip()
                print(f"FAIL {rank} {path.stem} {backend}: {detail}", flush=True)
    print(f"rank {rank}: {len(paths)} modules, {failures} failures on {n} processes",
          file=sys.stderr)
    if failures == 0:
        print(f"PASS {rank}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
