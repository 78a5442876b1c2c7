"""The HLO evaluator (XLA's HloEvaluator): runs any module with NumPy, XLA's
semantics to the letter. It is the oracle for every compiled backend, and
constant folding, eager mode and the compilers' fallbacks run it too; the
interpreter backend (`xlapy.backends.interpreter`) is a thin wrapper."""
