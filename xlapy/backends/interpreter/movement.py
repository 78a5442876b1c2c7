"""Interpreter rules: movement (being written)."""
