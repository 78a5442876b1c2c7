"""Interpreter rules: control_flow (being written)."""
