"""Helpers for the builder tests: run a built module in the interpreter, and check
that it survives XLA's text format both ways."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloModule
from xlapy.hlo.parser import parse_module


def evaluate(module: HloModule, *args):
    """The entry's result on `args`, as the HLO evaluator computes it (an op it has
    no rule for fails the test)."""
    return Evaluator().call(module.entry_computation, [np.asarray(a) for a in args])


def round_trips(module: HloModule) -> bool:
    """parse(print(m)) == m in both text forms, and printing again gives the same text."""
    for short in (False, True):
        text = module.to_text(short=short)
        parsed = parse_module(text)
        assert parsed == module, f"parse(to_text(short={short})) differs:\n{text}"
        assert parsed.to_text(short=short) == text
    return True
