"""`xlapy report FILE.hlo -o PAGE.html`: the compile report of a module on disk.

One self-contained page (no network: styles and pictures inline) showing the
user's source lines beside the HLO they produced, every pass that changed the
module as a diff with its time, the fusion decisions and the compiled kernels
as a graph, the values alive over the schedule with the peak, each kernel's
cost against this machine's floor (measured times too with `--profile`), and
the lowering fallbacks.
"""

from __future__ import annotations

import argparse
import sys

from xlapy.errors import ParseError, XlapyError
from xlapy.hlo import parse
from xlapy.hlo.fake_data import fake_arguments
from xlapy.report import report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="an HLO text file")
    parser.add_argument("-o", "--output", help="the page to write (default: FILE.report.html)")
    parser.add_argument("--profile", type=int, nargs="?", const=10, default=0, metavar="RUNS",
                        help="run the compiled module RUNS times (10) on random arguments and "
                        "show each kernel's median time against its floor")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random arguments")


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb") as f:
            module = parse(f.read())
    except OSError as e:
        print(f"xlapy report: {e}", file=sys.stderr)
        return 2
    except ParseError as e:
        print(f"xlapy report: {args.file}: {e}", file=sys.stderr)
        return 2
    arguments = fake_arguments(module, args.seed) if args.profile else None
    try:
        page = report(module, "cpu", arguments, args.profile)
    except XlapyError as e:   # a module that does not verify or compile: bad input
        print(f"xlapy report: {args.file}: {e}", file=sys.stderr)
        return 2
    output = args.output or args.file.rsplit(".", 1)[0] + ".report.html"
    with open(output, "w") as f:
        f.write(page)
    print(f"{output}: the compile report of {module.name} ({len(page) // 1024} KiB, one "
          "self-contained page)")
    return 0
