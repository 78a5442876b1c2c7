"""`xlapy opt`: run HLO passes on a module and print the result, like XLA's hlo-opt.

    xlapy opt FILE.hlo                     # the default optimisation pipeline
    xlapy opt FILE.hlo --passes dce,cse    # just these passes, in this order
    xlapy opt --list-passes                # pass names and the default pipeline

The module is verified before and after every pass that changes it (this is
a debugging tool; `--no-verify` turns that off). `XLAPY_FLAGS` applies, so
`--xla_dump_to` and `--xla_dump_hlo_pass_re` dump the steps as a compilation
would.
"""

from __future__ import annotations

import argparse
import sys

from xlapy.hlo import parse
from xlapy.passes.default_pipeline import (
    PASS_REGISTRY,
    available_passes,
    default_pipeline,
    make_passes,
    optimize,
)
from xlapy.passes.pipeline import Pipeline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="HLO text file ('-' for stdin)")
    parser.add_argument("--passes", default=None,
                        help="comma-separated pass names to run instead of the default pipeline")
    parser.add_argument("--list-passes", action="store_true",
                        help="list the pass names and the default pipeline, then exit")
    parser.add_argument("-o", "--output", default=None, help="write the result here")
    parser.add_argument("--short", action="store_true",
                        help="print the short form (JAX's: no operand shapes)")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=True,
                        help="verify after every pass that changes the module (default on)")


def run(args: argparse.Namespace) -> int:
    if args.list_passes:
        print(list_passes())
        return 0
    if not args.file:
        raise ValueError("give an HLO file (or --list-passes)")
    text = sys.stdin.buffer.read() if args.file == "-" else _read(args.file)
    module = parse(text)
    if args.passes is not None:
        names = [name.strip() for name in args.passes.split(",") if name.strip()]
        pipeline = Pipeline("opt", make_passes(names))
    else:
        pipeline = default_pipeline()
    optimize(module, pipeline, verify=args.verify)
    result = module.to_text(short=args.short)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result)
    else:
        sys.stdout.write(result)
    return 0


def list_passes() -> str:
    """Every registered pass (marked when not yet available) and the default pipeline."""
    available = available_passes()
    width = max(len(name) for name in PASS_REGISTRY)
    lines = ["passes (for --passes):"]
    for name, (_, description) in PASS_REGISTRY.items():
        note = "" if name in available else "  [not available yet]"
        lines.append(f"  {name:<{width}}  {description}{note}")
    lines += ["", "default pipeline:", default_pipeline().describe()]
    return "\n".join(lines)


def _read(path: str) -> bytes:
    """Bytes: text that is not UTF-8 is the parser's to report, with its position."""
    with open(path, "rb") as f:
        return f.read()


if __name__ == "__main__":
    p = argparse.ArgumentParser(prog="xlapy opt", description=__doc__)
    add_arguments(p)
    sys.exit(run(p.parse_args()))
