"""Interpreter rules: rng (being written)."""
