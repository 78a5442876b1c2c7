"""Interpreter rules: reductions (being written)."""
