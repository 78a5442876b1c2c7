"""The GPU backend: HLO -> kernels in one LLVM module -> PTX for NVIDIA GPUs.

Compiling needs only LLVM (llvmlite's NVPTX target): `xlapy.compile(module,
backend="gpu")` works on any machine and `--xla_dump_to` writes the PTX.
Running needs the CUDA driver and a device (`cuda-bindings`, the `gpu`
extra); without them an execution raises `GpuUnavailable` saying which is
missing. `GpuExecutable.emulate` runs the same program with its kernels
compiled for the host CPU, which is how the backend is tested without a GPU.
"""

from __future__ import annotations

from xlapy.backends.base import Backend
from xlapy.backends.gpu import driver
from xlapy.backends.gpu.compiler import compile_module
from xlapy.backends.gpu.device_array import DeviceArray, device_put
from xlapy.backends.gpu.executable import GpuExecutable
from xlapy.hlo.ir import HloModule


class GpuBackend(Backend):
    name = "gpu"

    def compile(self, module: HloModule, optimize: bool = True) -> GpuExecutable:
        """Always optimises (fusion is what the GPU compiles); needs no device."""
        return compile_module(module)


def device_available() -> bool:
    """Whether a CUDA device and its driver are here to run GPU executables."""
    return driver.available()


__all__ = ["DeviceArray", "GpuBackend", "GpuExecutable", "device_available", "device_put"]
