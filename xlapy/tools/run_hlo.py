"""`xlapy run-hlo`: run a module on a backend and compare with a reference backend,
like XLA's run_hlo_module.

    xlapy run-hlo FILE.hlo [--inputs x.npz | --random] --backend B --compare interpreter
    xlapy run-hlo --snapshot module_0003.jit_step.snapshot.0.npz --backend B

Arguments are random (`--random`, the default; `--seed` picks them) or read
from an `.npz` file (`--inputs`): by parameter name when the file holds every
parameter's name, else in order (`np.savez`'s `arr_0`, `arr_1`, ...). As XLA's
tool does by default, the module under test first goes through the
optimisation pipeline (`--no-run-test-hlo-passes` to skip it); the reference
runs the module as written. For each output the largest absolute and
relative errors are reported, with the index where they occur, and the
output is "close enough" when every element is within `--abs-error-bound` or
`--rel-error-bound` (integers and predicates must match exactly; NaN matches
NaN). The exit status is 1 on a mismatch.

`--snapshot FILE` replays an execution recorded with `--xla_dump_hlo_snapshots`
(as XLA's replay_computation does): the recorded module runs on the recorded
arguments on `--backend`, and its results are compared with the recorded ones.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from xlapy.backends import get_backend, snapshots
from xlapy.errors import ParseError
from xlapy.hlo import parse
from xlapy.hlo.fake_data import fake_arguments
from xlapy.passes.default_pipeline import optimize
from xlapy.tools import bisect
from xlapy.tools.compare import compare, index_text, leaves, output_errors  # noqa: F401


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", help="HLO text files")
    parser.add_argument("--snapshot", action="append", default=[],
                        help="replay a recorded execution (module_NNNN.NAME.snapshot.K.npz, "
                        "written with --xla_dump_hlo_snapshots) and compare with its results")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--inputs", default=None, help="an .npz file of arguments")
    source.add_argument("--random", action="store_true",
                        help="random arguments (the default), see --seed")
    parser.add_argument("--backend", default=None, help="backend to test (default: the default)")
    parser.add_argument("--compare", "--reference", dest="reference", default="interpreter",
                        help="backend to compare with; '' for none (default: interpreter)")
    parser.add_argument("--run-test-hlo-passes", action=argparse.BooleanOptionalAction,
                        default=True, help="optimise the module before running it on the "
                        "tested backend (default on, as XLA's run_hlo_module)")
    parser.add_argument("--abs-error-bound", type=float, default=1e-3)
    parser.add_argument("--rel-error-bound", type=float, default=1e-3)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random arguments")
    parser.add_argument("--print-literals", action="store_true")
    parser.add_argument("--bisect", action="store_true",
                        help="on a mismatch, find the first instruction (in schedule order) "
                        "whose compiled value leaves the bounds")
    parser.add_argument("--minimize", action="store_true",
                        help="with --bisect: shrink the module around that instruction and "
                        "write the smallest that still mismatches (HLO text + inputs .npz)")
    parser.add_argument("--out", default=".", help="where --minimize writes (default: .)")


def run(args: argparse.Namespace) -> int:
    if not args.files and not args.snapshot:
        print("xlapy run-hlo: give HLO files or --snapshot FILE", file=sys.stderr)
        return 2
    status = 0
    for path in args.files:
        status |= _run_file(path, args)
    for path in args.snapshot:
        status |= _replay(path, args)
    return status


def _replay(path: str, args: argparse.Namespace) -> int:
    """Run a recorded execution again and compare with what it returned then."""
    try:
        snapshot = snapshots.read(path)
    except ValueError as e:
        print(f"xlapy run-hlo: {e}", file=sys.stderr)
        return 2
    try:
        module = parse(snapshot.hlo_text)
    except ParseError as e:
        print(f"xlapy run-hlo: {path}: the recorded module does not parse: {e}", file=sys.stderr)
        return 2
    backend = args.backend or snapshot.backend
    if args.run_test_hlo_passes:
        optimize(module)
    results = get_backend(backend).compile(module).execute(*snapshot.arguments)
    print(f"{path}: {module.name}, recorded on {snapshot.backend}, replayed on {backend}")
    ok = _compare_outputs(results, snapshot.results, args, "the recorded results",
                          "the snapshot recorded")
    return 0 if ok else 1


def _compare_outputs(results, expected, args: argparse.Namespace, against: str,
                     counted: str) -> bool:
    """Print each output's errors against `expected` (leaf by leaf) and the verdict."""
    got, want = leaves(results), leaves(expected)
    ok = len(got) == len(want)
    for (index, value), (_, reference) in zip(got, want):
        report = output_errors(value, reference, args.abs_error_bound, args.rel_error_bound)
        print(f"  output {index_text(index)}: {report}")
        ok &= report.close
    if len(got) != len(want):
        print(f"  {len(got)} outputs, {counted} {len(want)}")
    print(f"  vs {against}: {'close enough' if ok else 'MISMATCH'}")
    return ok


def _run_file(path: str, args: argparse.Namespace) -> int:
    with open(path, "rb") as f:   # bytes: bad UTF-8 is a ParseError with its position
        text = f.read()
    module = parse(text)
    arguments = load_inputs(module, args.inputs) if args.inputs else \
        fake_arguments(module, args.seed)
    if args.run_test_hlo_passes:
        optimize(module)
    executable = get_backend(args.backend).compile(module)
    start = time.perf_counter()
    for _ in range(max(1, args.iterations)):
        results = executable.execute(*arguments)
    seconds = (time.perf_counter() - start) / max(1, args.iterations)
    print(f"{path}: {module.name} on {executable.backend}: {seconds * 1e3:.3f} ms")
    if args.print_literals:
        for i, value in enumerate(results):
            print(f"  result {i}: {value!r}")
    if not args.reference:
        return 0
    expected = get_backend(args.reference).compile(parse(text)).execute(*arguments)
    ok = _compare_outputs(results, expected, args, args.reference, "the reference has")
    if not ok and args.bisect:
        _bisect(path, text.decode(errors="replace"), arguments, args)
    return 0 if ok else 1


def _bisect(path: str, text: str, arguments: list, args: argparse.Namespace) -> None:
    finding = bisect.find_first_mismatch(text, arguments, args.backend, args.reference,
                                         args.abs_error_bound, args.rel_error_bound,
                                         args.run_test_hlo_passes)
    if finding is None:
        print("  bisect: every intermediate value agrees when they are all outputs (the "
              "mismatch needs them fused away); no single instruction found")
        return
    print("  bisect: " + str(finding).replace("\n", "\n  "))
    if not args.minimize:
        return
    reduced, inputs = bisect.minimize(text, arguments, finding, args.backend, args.reference,
                                      args.abs_error_bound, args.rel_error_bound,
                                      args.run_test_hlo_passes)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, os.path.basename(path).rsplit(".", 1)[0] + ".minimized")
    with open(stem + ".hlo", "w") as f:
        f.write(reduced)
    np.savez(stem + ".inputs.npz", **inputs)
    size = sum(1 for line in reduced.splitlines() if " = " in line)
    print(f"  minimize: {size} instructions left, written to {stem}.hlo with its inputs "
          f"{stem}.inputs.npz (xlapy run-hlo {stem}.hlo --inputs {stem}.inputs.npz)")


def load_inputs(module, path: str) -> list:
    """The arguments stored in an .npz file: by parameter name, else in order."""
    parameters = module.entry_computation.parameters
    with np.load(path, allow_pickle=False) as data:
        stored = {key: data[key] for key in data.files}
    if any(p.shape.is_tuple for p in parameters):
        raise ValueError(f"{path}: tuple parameters cannot be read from an .npz file")
    if all(p.name in stored for p in parameters):
        return [stored[p.name] for p in parameters]
    if len(stored) != len(parameters):
        raise ValueError(f"{path} holds {len(stored)} arrays, {module.name} takes "
                         f"{len(parameters)} parameters ({', '.join(p.name for p in parameters)})")
    return [stored[key] for key in sorted(stored, key=_natural_key)]


def _natural_key(key: str):
    digits = "".join(c for c in key if c.isdigit())
    return (int(digits) if digits else -1, key)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    add_arguments(p)
    sys.exit(run(p.parse_args()))
