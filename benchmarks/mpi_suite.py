"""`xlapy bench --distributed`: collectives and data-parallel training over MPI.

1. All-reduce bandwidth over message sizes, in `mpiexec -n 2`: a compiled
   xlapy module holding one all-reduce (f32 sum), called on a NumPy array,
   beside mpi4py's own `Allreduce` on NumPy buffers of the same size, taking
   turns in the same processes. Bandwidth is the message size over the
   median time (the algorithm bandwidth, as nccl-tests and OSU report it).
2. Data-parallel training throughput of the MLP (`xlapy train`) on 1, 2 and 4
   processes with the global batch fixed, and the time each step spends in
   collectives. On a machine with fewer cores than processes the runs are
   oversubscribed: the table says how many cores there are.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = [2 ** k for k in range(12, 25, 2)]   # 4 KiB .. 16 MiB


def _mpiexec() -> str:
    found = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    if not os.path.exists(found):
        raise ValueError("xlapy bench --distributed needs mpiexec and mpi4py: "
                         "pip install -e '.[distributed]'")
    return found


def _launch(n: int, *command: str, flags: str = "") -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")]))
    env["XLAPY_FLAGS"] = f"{env.get('XLAPY_FLAGS', '')} {flags}".strip()
    job = subprocess.run([_mpiexec(), "-n", str(n), *command], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=1800)
    if job.returncode:
        raise ValueError(f"mpiexec -n {n} {' '.join(command)} failed:\n"
                         f"{(job.stdout + job.stderr)[-3000:]}")
    return job.stdout


def allreduce_bandwidth(tiny: bool) -> None:
    """Runs inside mpiexec: the table of part 1, printed by rank 0."""
    import numpy as np  # noqa: F401  (inside: this part runs in the MPI processes)
    from mpi4py import MPI  # optional: the distributed extra

    import xlapy

    xlapy.distributed.initialize()
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    sizes = SIZES[:3] if tiny else SIZES
    if rank == 0:
        print(f"all-reduce (f32 sum) over {n} processes: bandwidth = bytes / median time")
        print(f"{'bytes':>10} {'xlapy µs':>10} {'mpi4py µs':>10} {'xlapy GB/s':>11} "
              f"{'mpi4py GB/s':>12} {'xlapy/mpi4py':>13}")
    for size in sizes:
        count = size // 4
        text = (f"HloModule allreduce_{count}, replica_count={n}\n"
                "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                " ROOT c = f32[] add(a, b) }\n"
                f"ENTRY e {{\n x = f32[{count}] parameter(0)\n"
                f" ROOT r = f32[{count}] all-reduce(x), replica_groups={{}}, to_apply=sum\n}}\n")
        executable = xlapy.compile(text, backend="cpu")
        x = np.full(count, rank + 1, np.float32)
        out = np.empty_like(x)
        np.testing.assert_array_equal(executable.execute(x)[0], n * (n + 1) / 2)
        comm.Barrier()
        repeats = 5 if tiny else max(20, min(400, (128 << 20) // size))
        times = _in_turns({"xlapy": lambda e=executable, x=x: e.execute(x),
                           "mpi4py": lambda x=x, out=out: comm.Allreduce(x, out)}, repeats, comm)
        if rank == 0:
            a, b = times["xlapy"], times["mpi4py"]
            print(f"{size:>10} {a * 1e6:>10.1f} {b * 1e6:>10.1f} {size / a / 1e9:>11.2f} "
                  f"{size / b / 1e9:>12.2f} {b / a:>13.2f}", flush=True)


def _in_turns(fns: dict, repeats: int, comm, rounds: int = 15) -> dict[str, float]:
    """Median seconds per call of each collective, timed in turns, the order of the
    turns reversed every other round (which one runs after which moves the
    numbers here by up to 20%: caches, page placement). Every rank makes the same
    calls (fixed counts, a barrier before each turn): a count chosen per rank
    from its own timings would leave a peer waiting in a collective."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for turn in range(rounds):
        for name, fn in (list(fns.items()) if turn % 2 == 0 else reversed(fns.items())):
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(repeats):
                fn()
            samples[name].append((time.perf_counter() - start) / repeats)
    return {name: sorted(s)[len(s) // 2] for name, s in samples.items()}


def run(tiny: bool = False) -> int:
    """Both parts, launched with mpiexec from here."""
    print(_launch(2, sys.executable, "-m", "benchmarks.mpi_suite", "allreduce",
                  *(["--tiny"] if tiny else [])))
    steps, batch = (5, 64) if tiny else (60, 512)
    cores = os.cpu_count() or 1
    print(f"data-parallel MLP (xlapy train --synthetic), global batch {batch}, {steps} steps; "
          f"this machine has {cores} cores, shared by the processes (threads each: cores / "
          f"processes, at least 1)")
    print(f"{'processes':>9} {'threads':>7} {'ms/step':>9} {'examples/s':>11} {'speed-up':>9} "
          f"{'collectives ms/step':>20}")
    base = None
    for n in (1, 2, 4):
        threads = max(1, cores // n)
        out = _launch(n, sys.executable, "-m", "xlapy.cli", "train", "--synthetic", "--quiet",
                      "--steps", str(steps), "--batch-size", str(batch),
                      flags=f"--xla_cpu_parallelism={threads}")
        match = re.search(r"then ([\d.]+) ms/step, (\d+) examples/s; in collectives ([\d.]+)",
                          out)
        if match is None:
            raise ValueError(f"xlapy train printed no summary:\n{out}")
        ms, rate, coll = float(match[1]), int(match[2]), float(match[3])
        base = base or ms
        print(f"{n:>9} {threads:>7} {ms:>9.2f} {rate:>11} {base / ms:>8.2f}x {coll:>20.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["allreduce"]:
        allreduce_bandwidth("--tiny" in sys.argv)
