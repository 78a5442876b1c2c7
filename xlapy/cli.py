"""The `xlapy` command: one subcommand per tool."""

from __future__ import annotations

import argparse
import sys

from xlapy.errors import XlapyError
from xlapy.tools import aot, bench, demo, fuzz, opt, report, run_hlo, train

COMMANDS = {
    "aot": (aot, "compile ahead of time into an object file and a C header"),
    "bench": (bench, "run the benchmark suite: every workload, every peer, one table"),
    "demo": (demo, "run the main job: a model end to end"),
    "fuzz": (fuzz, "reliability campaigns: random programs vs XLA and the interpreter, "
                   "parser mutations; shrink a failure"),
    "opt": (opt, "run HLO passes on a module and print the result"),
    "report": (report, "one self-contained HTML page of what the compiler did with a module"),
    "run-hlo": (run_hlo, "run HLO text files on a backend and compare with the interpreter"),
    "train": (train, "data-parallel training over MPI processes (mpiexec -n N xlapy train)"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="xlapy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        module.add_arguments(sub.add_parser(
            name, help=help_text, description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter))   # keep the examples' lines
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command][0].run(args)
    except (OSError, ValueError, XlapyError) as e:  # bad file, bad text: a message, not a traceback
        print(f"xlapy {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
