"""Frontends for other frameworks: each hands xlapy a graph, as it would hand XLA one.

    xlapy.frontends.jax     `jit(f)`: JAX lowers `f` to HLO text, xlapy compiles and runs it
    xlapy.frontends.torch   the TorchDynamo backend `"xlapy"` (`torch.compile(m,
                            backend="xlapy")`): FX graphs after AOTAutograd become HLO
    xlapy.frontends.tensorflow  `function(f)`: TF's own bridge lowers a tf.function to
                            HLO, xlapy compiles and runs it (variables read and written)

Each framework is optional: importing this package imports none of them, and a
frontend imports its framework only when it is used.
"""
