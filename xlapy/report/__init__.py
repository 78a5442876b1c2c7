"""One self-contained HTML page per compiled module: what the compiler did
with it and why (`xlapy report FILE.hlo -o PAGE.html`, or
`--xlapy_dump_report` with `--xla_dump_to` for every module compiled)."""

from __future__ import annotations

import os
import warnings

from xlapy.backends import add_compile_hook
from xlapy.flags import debug_options, register_flag
from xlapy.hlo.fake_data import fake_arguments
from xlapy.hlo.ir import HloModule
from xlapy.passes import dump
from xlapy.report.collect import ReportData, collect
from xlapy.report.page import render

register_flag("xlapy_dump_report", "bool", False,
              "with --xla_dump_to, write module_NNNN.NAME.report.html for each compiled module: "
              "sources, pass diffs, fusion, buffers, costs, fallbacks (one offline page)")


def report(module: HloModule, backend: str = "cpu", arguments: list | None = None,
           profile_runs: int = 0) -> str:
    """The report page of `module` compiled for `backend` (profiled on `arguments`
    `profile_runs` times when given)."""
    return render(collect(module, backend, arguments, profile_runs))


_WRITING = []   # a report compiles the module again: its own compile is not reported


def _dump_hook(module: HloModule, backend: str) -> None:
    flags = debug_options()
    if not (flags.xlapy_dump_report and flags.xla_dump_to not in ("", "-")) or _WRITING:
        return
    path = os.path.join(flags.xla_dump_to, dump.filename_for(module, "report.html"))
    _WRITING.append(path)
    try:   # under --xla_hlo_profile, each kernel timed on random arguments too
        runs = 5 if flags.xla_hlo_profile else 0
        page = report(module, "cpu", fake_arguments(module) if runs else None, runs)
        os.makedirs(flags.xla_dump_to, exist_ok=True)
        with open(path, "w") as f:
            f.write(page)
    except Exception as e:   # noqa: BLE001  (a report never fails the program's compile)
        warnings.warn(f"could not write the report {path}: {e}", stacklevel=2)
    finally:
        _WRITING.pop()


add_compile_hook(_dump_hook)

__all__ = ["ReportData", "collect", "render", "report"]
