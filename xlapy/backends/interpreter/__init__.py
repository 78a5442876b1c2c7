"""The interpreter backend: the HLO evaluator (`xlapy.hlo.evaluator`) behind
the backend interface. It is the oracle for every compiled backend."""

from __future__ import annotations

from xlapy.analysis import assign_buffers
from xlapy.backends.base import Backend, Executable, dump_buffer_assignment, optimized_copy
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloModule
from xlapy.hlo.verifier import verify


class InterpreterExecutable(Executable):
    def __init__(self, module: HloModule, backend: str):
        super().__init__(module, backend)
        self._evaluator = Evaluator()

    def execute(self, *arrays) -> list:
        args = self.check_arguments(arrays)
        result = self._evaluator.call(self.module.entry_computation, args)
        return list(result) if isinstance(result, tuple) else [result]


class InterpreterBackend(Backend):
    name = "interpreter"

    def compile(self, module: HloModule, optimize: bool = False) -> InterpreterExecutable:
        """Unoptimised by default: as the oracle it runs exactly the HLO it is given.
        `jit` asks for the optimised module, so fused kernels run here too."""
        verify(module)
        if optimize:
            module, dumper = optimized_copy(module)
            dump_buffer_assignment(dumper, assign_buffers(module), "")
        return InterpreterExecutable(module, self.name)
