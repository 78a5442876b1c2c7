"""Target-independent HLO optimisation passes and the pass manager."""

from xlapy.passes.pass_interface import Pass

__all__ = ["Pass"]
