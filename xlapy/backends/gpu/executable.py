"""A compiled GPU module: compiled without a device, run on one (or emulated).

The first run on a device loads the PTX there (`device_runner`); `emulate`
runs the same thunks with the kernels compiled for the host CPU
(`host_emulation`), which is how a machine without a GPU tests them.
"""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import Executable, check_value
from xlapy.backends.gpu import device_runner, driver, host_emulation
from xlapy.backends.gpu.program import GpuProgram
from xlapy.errors import ExecutionError


class GpuExecutable(Executable):
    """A compiled GPU program. Compiling needed no device; running needs one (or
    `emulate`, which runs the same thunks with host-compiled kernels)."""

    def __init__(self, program: GpuProgram, compile_seconds: float = 0.0):
        super().__init__(program.module, "gpu")
        self.program = program
        self.assignment = program.assignment
        self.compile_seconds = compile_seconds
        self.from_cache = program.from_cache
        """Its code came from the disk cache (`program_cache`), not the emitter."""
        self.fallbacks: list = []
        """Always empty: the GPU backend never runs an instruction on the host."""
        self._device = None
        self._host = None

    @property
    def ptx(self) -> str:
        return self.program.ptx

    def execute(self, *arrays) -> list:
        """Run on the GPU; the results stay there (`DeviceArray`, NumPy on request)."""
        return self.run(self.check_arguments(arrays))

    def check_arguments(self, arrays) -> list:
        """NumPy-convertible arguments checked as every backend checks them; device
        arrays (anything with `__cuda_array_interface__`) checked for shape and dtype
        and left where they are."""
        if not any(_on_device(a) for a in arrays):
            return super().check_arguments(arrays)
        params = self.module.entry_computation.parameters
        if len(arrays) != len(params):
            raise ExecutionError(f"{self.module.name} takes {len(params)} argument(s), "
                                 f"got {len(arrays)}")
        checked = []
        for value, param in zip(arrays, params):
            if _on_device(value):
                if tuple(value.shape) != param.shape.dimensions or \
                        np.dtype(value.dtype) != param.shape.dtype:
                    raise ExecutionError(f"argument {param.parameter_number} ({param.name}): "
                                         f"expected {param.shape.to_text(False)}, got a "
                                         f"device array {value.dtype}{list(value.shape)}")
                checked.append(value)
            else:
                checked.append(check_value(value, param.shape,
                                           f"argument {param.parameter_number} ({param.name})"))
        return checked

    def run(self, args: list) -> list:
        if self._device is None:
            if not driver.available():
                raise driver.GpuUnavailable(
                    f"{self.module.name} was compiled for the GPU ({self.program.arch} PTX), "
                    f"but it cannot run here: {driver.problem()}")
            self._device = device_runner.DeviceMachine(self.program)
        return self._device.run(args)

    def emulate(self, *arrays) -> list:
        """Run the program's thunks with its kernels compiled for the host CPU (one
        emulated thread at a time): results as NumPy arrays, no GPU needed."""
        args = self.check_arguments(arrays)
        if self._host is None:
            self._host = host_emulation.HostMachine(self.program)
        return self._host.run(args)


def _on_device(value) -> bool:
    return hasattr(value, "__cuda_array_interface__")
