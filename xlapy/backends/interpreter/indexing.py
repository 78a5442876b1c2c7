"""Interpreter rules: indexing (being written)."""
