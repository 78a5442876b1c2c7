"""Interpreter rules: collectives (being written)."""
