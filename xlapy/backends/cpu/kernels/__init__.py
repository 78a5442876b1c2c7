"""Hand-structured kernels the CPU emitter calls instead of composing loops (dot)."""
