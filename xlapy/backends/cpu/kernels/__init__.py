"""Hand-structured kernels the CPU emitter calls instead of composing loops
(GEMM, convolution, sort, gather/scatter, windows, rng, linear algebra,
in-place updates). Each family registers with `special_kernels.special`;
`lowering.py`, the table of every opcode's lowering, imports them all."""
