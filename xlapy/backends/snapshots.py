"""Snapshots of executions, XLA's `--xla_dump_hlo_snapshots`, and their replay.

With `--xla_dump_hlo_snapshots` and `--xla_dump_to=DIR`, every executable a
backend compiles records each of its executions in one file,
`module_NNNN.NAME.snapshot.K.npz` (XLA's name, NNNN the module's dump number,
K the execution): the module as it was handed to the compiler (HLO text),
the backend, every argument and every result. `xlapy run-hlo --snapshot
FILE` runs the module again on the arguments, on any backend, and compares
with the recorded results, as XLA's `replay_computation` does. A snapshot is
a plain NumPy archive (no pickles), so it is read without running code.
"""

from __future__ import annotations

import itertools
import os
import warnings
import zipfile
from dataclasses import dataclass

import numpy as np

from xlapy.backends.base import Executable
from xlapy.flags import debug_options, register_flag
from xlapy.hlo.ir import HloModule
from xlapy.passes import dump

register_flag("xla_dump_hlo_snapshots", "bool", False,
              "with --xla_dump_to, write each execution's module, arguments and results as "
              "module_NNNN.NAME.snapshot.K.npz (replayed by xlapy run-hlo --snapshot)")


@dataclass
class Snapshot:
    """One recorded execution."""

    hlo_text: str
    backend: str
    arguments: list        # one array (or tuple of arrays) per entry parameter
    results: list          # the flat result leaves, in order


def recording(compile_fn):
    """A backend's `compile`, whose executables record their executions when
    snapshots are asked for at compile time."""
    def compile(module: HloModule, *args, **kwargs):
        executable = compile_fn(module, *args, **kwargs)
        directory = wanted()
        return SnapshotExecutable(executable, module, directory) if directory else executable
    compile.__doc__ = compile_fn.__doc__
    return compile


def wanted() -> str:
    """The directory snapshots go to, or '' when they are not asked for."""
    flags = debug_options()
    return flags.xla_dump_to if flags.xla_dump_hlo_snapshots and flags.xla_dump_to not in (
        "", "-") else ""


class SnapshotExecutable(Executable):
    """An executable that records every execution it runs, then returns its results."""

    def __init__(self, inner: Executable, module: HloModule, directory: str):
        super().__init__(inner.module, inner.backend)
        self.inner = inner
        self._text = module.to_text()
        self._directory = directory
        self._prefix = dump.filename_for(module, "snapshot")
        self._count = itertools.count()

    def __getattr__(self, name):   # everything else is the compiled executable's
        return getattr(self.__dict__["inner"], name)

    def execute(self, *arrays) -> list:
        results = self.inner.execute(*arrays)
        self._record(list(arrays), results)
        return results

    def run(self, args: list) -> list:
        results = self.inner.run(args)
        self._record(args, results)
        return results

    def _record(self, arguments: list, results: list) -> None:
        path = os.path.join(self._directory, f"{self._prefix}.{next(self._count)}.npz")
        try:
            os.makedirs(self._directory, exist_ok=True)
            write(path, Snapshot(self._text, self.backend, arguments, list(results)))
        except (OSError, TypeError, ValueError) as e:   # a dump never fails the program
            warnings.warn(f"could not write the snapshot {path}: {e}", stacklevel=3)


def write(path: str, snapshot: Snapshot) -> None:
    arrays = {"hlo": np.frombuffer(snapshot.hlo_text.encode(), np.uint8),
              "backend": np.frombuffer(snapshot.backend.encode(), np.uint8)}
    for i, argument in enumerate(snapshot.arguments):
        if isinstance(argument, (tuple, list)):
            for j, part in enumerate(argument):
                arrays[f"argument_{i}_{j}"] = np.asarray(part)
        else:
            arrays[f"argument_{i}"] = np.asarray(argument)
    for k, leaf in enumerate(_leaves(snapshot.results)):
        arrays[f"result_{k}"] = np.asarray(leaf)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def read(path: str) -> Snapshot:
    """The snapshot at `path`; ValueError saying what is wrong with a damaged one."""
    try:
        with np.load(path, allow_pickle=False) as data:
            stored = {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: not a readable snapshot ({e})") from None
    if "hlo" not in stored or "backend" not in stored:
        raise ValueError(f"{path}: not a snapshot (no module text in it)")
    arguments: dict[int, object] = {}
    for key in sorted(k for k in stored if k.startswith("argument_")):
        parts = [int(p) for p in key.split("_")[1:]]
        if len(parts) == 1:
            arguments[parts[0]] = stored[key]
        else:
            arguments.setdefault(parts[0], {})[parts[1]] = stored[key]
    ordered = [tuple(v[j] for j in sorted(v)) if isinstance(v, dict) else v
               for _, v in sorted(arguments.items())]
    results = [stored[f"result_{k}"] for k in range(sum(k.startswith("result_")
                                                        for k in stored))]
    return Snapshot(bytes(stored["hlo"]).decode(), bytes(stored["backend"]).decode(),
                    ordered, results)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]
