"""A lowered FX graph compiled by xlapy and called with tensors, as AOTAutograd calls a
compiled graph: tensors in, a list of tensors out.

Inputs cross as NumPy views of the tensors' storage and results come back as
tensors sharing xlapy's output buffers (dtypes.to_numpy / from_numpy). A tensor
laid out as a permutation of a contiguous one crosses in its memory order (see
LoweredGraph), so outputs carry exactly the strides PyTorch's metadata gives and
nothing is copied on either side.
"""

from __future__ import annotations

import torch

from xlapy.backends import default_backend
from xlapy.backends.cpu import runtime_library
from xlapy.frontends.torch.convert import LoweredGraph, inverse
from xlapy.frontends.torch.dtypes import from_numpy, to_numpy
from xlapy.runtime import compile as compile_module


class CompiledGraph:
    """`graph(*tensors)` -> list of outputs (the backend boxes it for AOTAutograd)."""

    def __init__(self, lowered: LoweredGraph, gm: torch.fx.GraphModule | None = None,
                 backend: str | None = None):
        self.lowered = lowered
        if (backend or default_backend()) == "cpu":   # see openmp_pool: one thread team
            runtime_library.share_loaded_openmp(for_torch=True)
        self.executable = compile_module(lowered.module, backend)
        self._dtypes = lowered.out_dtypes
        self._in_perms = lowered.input_perms
        self._out_perms = [inverse(p) if p else None for p in lowered.output_perms]

    def __call__(self, *args) -> list:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        expected = self.lowered.input_count - self.lowered.needs_seed
        if len(tensors) != expected:
            raise TypeError(f"compiled graph takes {expected} tensors, got {len(tensors)}")
        arrays = [to_numpy(t.permute(perm) if perm else t)
                  for t, perm in zip(tensors, self._in_perms)]
        if self.lowered.needs_seed:
            key = torch.randint(-2 ** 31, 2 ** 31 - 1, (2,), dtype=torch.int32)
            arrays.append(key.numpy())
        results = self.executable.execute(*arrays)
        outputs = []
        for array, dtype, back in zip(results, self._dtypes, self._out_perms):
            tensor = from_numpy(array, dtype)
            outputs.append(tensor.permute(back) if back else tensor)
        return [outputs[where] if isinstance(where, int) else where[1]
                for where in self.lowered.outputs]
