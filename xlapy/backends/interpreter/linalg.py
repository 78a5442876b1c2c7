"""Interpreter rules: linalg (being written)."""
