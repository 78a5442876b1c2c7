"""The LLVM lowering every target shares: elemental emitters, the vectorised
math library, element generators, loop and reduction emitters, index
arithmetic. A backend on LLVM (`backends/cpu`) adds only what is
specific to it: its kernels, runtime, target machine and executables."""

from xlapy.codegen import dot_generator, elemental_extra, reduce_generator  # noqa: F401  (fill the tables)
