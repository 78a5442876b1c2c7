"""`xlapy fuzz`: the reliability campaigns, and shrinking what they find.

    xlapy fuzz jax    [--programs N] [--seed S] [--workers W] [--out DIR]
    xlapy fuzz hlo    [--programs N] [--seed S] [--workers W] [--out DIR] [--no-guard-pages]
    xlapy fuzz parser [--mutations N] [--seed S] [--workers W]
    xlapy fuzz reduce FILE.hlo --args FILE.npz [--out SMALL.hlo]

`jax` draws random JAX programs, lowers each with JAX to HLO (unoptimised,
and optimised by XLA) and runs both through xlapy's interpreter and CPU
backend, comparing with JAX's own results (needs JAX: the `oracle` extra).
`hlo` runs xlapy's own random HLO programs, compiled (under guard pages)
against the interpreter. `parser` throws mutated HLO text at the parser:
anything but a ParseError/VerifierError with a position, or a parse over one
second, is a failure. Every execution runs in a child process with a
timeout: hangs and crashes are counted, not fatal. Failing programs are
saved to --out as NAME.hlo + NAME.npz + NAME.txt; `reduce` shrinks one to a
small reproducer that still fails the same way (CPU vs interpreter). The
exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from xlapy.fuzz import campaign, jobs
from xlapy.fuzz.parser_campaign import run_parser_campaign
from xlapy.fuzz.reduce import reduce_module
from xlapy.fuzz.sandbox import Sandbox
from xlapy.hlo import parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="campaign", required=True)
    for name, what, count, timeout in (("jax", "random JAX programs vs XLA", 1000, 120.0),
                                       ("hlo", "xlapy's random HLO programs", 1000, 60.0)):
        p = sub.add_parser(name, help=what)
        p.add_argument("--programs", type=int, default=count, help="how many programs")
        p.add_argument("--seed", type=int, default=0, help="the first program's number")
        _common(p, timeout)
        p.add_argument("--out", default=None, help="directory for failing programs and "
                       "the summary (JSON)")
        p.add_argument("--guard-pages", action=argparse.BooleanOptionalAction,
                       default=name == "hlo",
                       help="run compiled code with every buffer against a protected page")
    p = sub.add_parser("parser", help="mutated HLO text against the parser")
    p.add_argument("--mutations", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    _common(p, 600.0)
    p = sub.add_parser("reduce", help="shrink a failing module (CPU vs interpreter)")
    p.add_argument("file", help="the failing module's HLO text")
    p.add_argument("--args", required=True, help=".npz of its arguments, in order")
    p.add_argument("--out", default=None, help="where to write the reduced module "
                   "(default FILE.reduced.hlo, arguments beside it as .npz)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per execution")
    p.add_argument("--max-checks", type=int, default=400)


def _common(p: argparse.ArgumentParser, timeout: float) -> None:
    p.add_argument("--workers", type=int, default=2, help="child processes running jobs")
    p.add_argument("--timeout", type=float, default=timeout, help="seconds per job")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace) -> int:
    return {"jax": _campaign, "hlo": _campaign, "parser": _parser,
            "reduce": _reduce}[args.campaign](args)


def _campaign(args: argparse.Namespace) -> int:
    if args.campaign == "jax":
        try:
            import jax  # noqa: F401
        except ImportError:
            print("xlapy fuzz jax needs JAX: pip install 'xlapy[oracle]'", file=sys.stderr)
            return 2
    run_campaign = campaign.run_jax_campaign if args.campaign == "jax" \
        else campaign.run_hlo_campaign
    log = (lambda line: print(line, file=sys.stderr)) if args.json else print
    summary = run_campaign(args.programs, seed=args.seed, workers=args.workers,
                           timeout=args.timeout, out_dir=args.out, log=log,
                           guard_pages=args.guard_pages)
    print(json.dumps(summary.to_json(), indent=1) if args.json else summary.table())
    return 0 if not summary.failed else 1


def _parser(args: argparse.Namespace) -> int:
    summary = run_parser_campaign(args.mutations, seed=args.seed, jobs=args.workers,
                                  log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(summary, indent=1, default=str))
    return 0 if not summary.get("failures") else 1


def _reduce(args: argparse.Namespace) -> int:
    with open(args.file, "rb") as f:
        text = parse(f.read()).to_text()   # bad text: a ParseError with its position
    with np.load(args.args) as data:
        arrays = [data[k] for k in data.files]
    oracle, compiled = Sandbox(), Sandbox({"XLAPY_FLAGS": "--xlapy_cpu_cache_dir=off"})

    def is_bad(candidate: str, candidate_args: list) -> bool:
        expected = oracle.run(jobs.interpret, candidate, candidate_args, timeout=args.timeout)
        if not expected.ok:   # only failures the interpreter can judge
            return False
        outcome = compiled.run(jobs.against_interpreter, candidate, candidate_args, "cpu",
                               expected.value, timeout=args.timeout)
        return outcome.status != "ok" or outcome.value is not None

    try:
        if not is_bad(text, arrays):
            print(f"{args.file}: the CPU backend agrees with the interpreter; nothing to "
                  "reduce", file=sys.stderr)
            return 1
        small, small_args = reduce_module(text, arrays, is_bad, log=print,
                                          max_checks=args.max_checks)
    finally:
        oracle.close()
        compiled.close()
    out = args.out or args.file.removesuffix(".hlo") + ".reduced.hlo"
    with open(out, "w", encoding="utf-8") as f:
        f.write(small)
    np.savez(out.removesuffix(".hlo") + ".npz", *small_args)
    print(f"wrote {out} ({small.count(chr(10))} lines) and its arguments")
    return 0
