"""`xlapy demo`: the main job.

Until the tracing frontend and the compiler land, the demo runs one HLO module
end to end: the seeds' softmax regression (logits = x·W + b, softmax, mean
cross-entropy) written as JAX lowers it, parsed, verified, printed back and
run, its result checked against the same model in plain NumPy.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import xlapy
from xlapy.hlo import parse

SOFTMAX_REGRESSION = Path(__file__).with_name("data") / "softmax_regression.hlo"


def numpy_reference(w, b, x, y):
    logits = x @ w + b
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -(y * log_probs).sum() / x.shape[0], np.exp(log_probs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default=None, help="backend to run on (default: best)")
    parser.add_argument("--show-hlo", action="store_true", help="print the module text")


def run(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((784, 10)) * 0.01).astype(np.float32)
    b = np.zeros(10, np.float32)
    x = rng.random((64, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]

    module = parse(SOFTMAX_REGRESSION.read_text())
    xlapy.hlo.verify(module)
    print(f"parsed and verified {module.name}: "
          f"{sum(len(c.instructions) for c in module.computations)} instructions in "
          f"{len(module.computations)} computations")
    if args.show_hlo:
        print(module.to_text())
    assert parse(module.to_text()) == module, "text round trip changed the module"
    print("text round trip: identical")

    executable = xlapy.compile(module, backend=args.backend)
    start = time.perf_counter()
    loss, probs = executable.execute(w, b, x, y)
    seconds = time.perf_counter() - start
    ref_loss, ref_probs = numpy_reference(w, b, x, y)
    print(f"ran on the {executable.backend} backend in {seconds * 1e3:.1f} ms")
    print(f"cross-entropy loss: {float(loss):.6f}   (NumPy: {float(ref_loss):.6f})")
    print(f"max |softmax - NumPy|: {float(np.abs(probs - ref_probs).max()):.2e}")
    ok = np.allclose(loss, ref_loss, rtol=1e-5) and np.allclose(probs, ref_probs, atol=1e-6)
    print("result matches NumPy" if ok else "RESULT DIFFERS FROM NUMPY")
    return 0 if ok else 1
