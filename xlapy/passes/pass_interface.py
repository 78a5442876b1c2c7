"""What a pass is: a name and `run(module) -> changed`.

A pass rewrites a module in place and says whether it changed anything, so a
fixed-point group knows when to stop. Passes are deterministic: the same
module in gives the same module out. Valid IR in, valid IR out.
"""

from __future__ import annotations

import abc

from xlapy.hlo.ir import HloModule


class Pass(abc.ABC):
    """One HLO transformation. Subclasses set `name` (XLA's spelling where XLA
    has the pass, e.g. "algsimp", "dce", "cse", "constant_folding", "fusion")."""

    name: str = "pass"

    @abc.abstractmethod
    def run(self, module: HloModule) -> bool:
        """Rewrite `module` in place; True when anything changed."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
