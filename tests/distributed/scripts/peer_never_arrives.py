"""Rank 1 never reaches the all-reduce (it hangs, or exits): rank 0's call must
fail after --xla_collective_timeout_s naming the collective, the group and the
missing rank; then the job ends (rank 0 aborts it at exit)."""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import xlapy
from xlapy import distributed
from xlapy.distributed.world import CollectiveTimeout

distributed.initialize()
RANK = distributed.process_index()
BACKEND, HOW = sys.argv[1], sys.argv[2]
TEXT = """HloModule stalled, replica_count=2
sum { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b) }
ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=sum
}"""
executable = xlapy.compile(TEXT, backend=BACKEND)
if RANK == 1:
    if HOW == "exit":
        os._exit(0)
    time.sleep(120)
start = time.monotonic()
try:
    executable.execute(np.ones(8, np.float32))
except CollectiveTimeout as e:
    print(f"TIMEOUT after {time.monotonic() - start:.1f}s: {e}", flush=True)
except xlapy.ExecutionError as e:
    print(f"FAILED after {time.monotonic() - start:.1f}s: {e}", flush=True)
else:
    print("NO ERROR", flush=True)
