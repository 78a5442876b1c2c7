"""Interpreter rules: elementwise (being written)."""
