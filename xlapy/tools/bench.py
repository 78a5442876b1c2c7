"""`xlapy bench`: the benchmark suite in a checkout's `benchmarks/` folder.

Every workload runs NumPy op by op, xlapy eager, xlapy `jit`, and JAX's `jit`,
PyTorch eager and `torch.compile` (Inductor) where installed, side by side in
one process; the table gives medians, ratios to NumPy, this machine's floor
for each workload, xlapy against the fastest other peer, and compile times
(xlapy's, JAX's and Inductor's, cold). See benchmarks/suite.py.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_UNITS = {"": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workloads", nargs="*",
                        help="workloads to run (default: all); 'memory' for the batch-size fit")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--plot", metavar="FILE.png", help="bar chart of speed-ups (matplotlib)")
    parser.add_argument("--memory-budget", default="1GiB", type=parse_bytes,
                        help="memory for the encoder's largest-batch fit (default 1GiB)")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes: checks the harness")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="cpu",
                        help="gpu: the GPU workloads (benchmarks/gpu_suite.py) on a CUDA device")
    parser.add_argument("--lazy", action="store_true",
                        help="eager code op by op, lazily (auto-clustered) and jitted, and the "
                        "cost of recording an operation (benchmarks/lazy_suite.py)")
    parser.add_argument("--torch", action="store_true",
                        help="nn.TransformerEncoderLayer forward and forward+backward through "
                        "torch.compile: backend='xlapy', Inductor and eager "
                        "(benchmarks/torch_suite.py)")
    parser.add_argument("--distributed", action="store_true",
                        help="all-reduce bandwidth against mpi4py and data-parallel training "
                        "on 1, 2 and 4 processes (benchmarks/mpi_suite.py; launches mpiexec)")


def parse_bytes(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:i?[bB])?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 512MiB or 2GiB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def _suite():
    """benchmarks.suite from the checkout this xlapy was installed from."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "suite.py").exists():
        raise ValueError(f"xlapy bench runs the suite in a checkout's benchmarks/ folder; "
                         f"none next to {root} (install with pip install -e from a clone)")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from benchmarks import suite  # the checkout's benchmarks/, not installed with the package

    return suite


def run(args: argparse.Namespace) -> int:
    suite = _suite()
    if args.lazy:
        from benchmarks import lazy_suite  # the checkout's, as above

        return lazy_suite.run(tiny=args.tiny)
    if args.torch:
        from benchmarks import torch_suite  # the checkout's, as above

        return torch_suite.run(tiny=args.tiny)
    if args.distributed:
        from benchmarks import mpi_suite  # the checkout's, as above

        return mpi_suite.run(tiny=args.tiny)
    if args.backend == "gpu":
        from benchmarks import gpu_suite  # the checkout's, as above

        return gpu_suite.run(tiny=args.tiny)
    if args.list:
        from benchmarks.workloads import WORKLOADS  # the checkout's, as above

        for w in WORKLOADS:
            print(f"{w.name:<14} {w.title}")
        print(f"{'memory':<14} encoder training: largest batch within --memory-budget")
        return 0
    if args.plot:
        from benchmarks.harness import require_matplotlib  # the checkout's, as above

        require_matplotlib()
    report = suite.run(args.workloads, tiny=args.tiny, memory_budget_bytes=args.memory_budget)
    if args.json:
        suite.write_json(report, args.json)
        print(f"results: {args.json}")
    if args.plot:
        from benchmarks.harness import plot  # the checkout's, as above

        plot(report["results"], args.plot)
        print(f"chart: {args.plot}")
    return 0
