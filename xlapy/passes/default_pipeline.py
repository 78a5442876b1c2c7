"""The target-independent optimisation pipeline, as a table of contents.

It reads like XLA's CPU pipeline (xla/service/cpu/cpu_compiler.cc): fusions
made elsewhere are undone and calls are inlined so that every computation is
one flat graph, a fixed-point "simplification" group cleans the graph up,
fusion groups what is left into kernels, and a last DCE sweeps away what
fusion made dead. A backend appends its own passes (`extra_passes`, run after
fusion) or edits the returned `Pipeline` before running it.

`optimize(module)` is what a compiler calls: it runs the pipeline with the
options `XLAPY_FLAGS` sets and writes the dumps those flags ask for
(`before_optimizations`, one file per matching pass, `after_optimizations`).
`PASS_REGISTRY` names every pass for `xlapy opt --passes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xlapy.flags import debug_options
from xlapy.hlo.ir import HloModule
from xlapy.passes import compile_profile
from xlapy.passes.algebraic_simplifier import AlgebraicSimplifier
from xlapy.passes.call_inliner import CallInliner
from xlapy.passes.constant_folding import HloConstantFolding
from xlapy.passes.cse import HloCSE
from xlapy.passes.dce import HloDCE
from xlapy.passes.defuser import Defuser
from xlapy.passes.dump import dumper_for
from xlapy.passes.flatten_call_graph import FlattenCallGraph
from xlapy.passes.fusion import InstructionFusion
from xlapy.passes.layout_agreement import LayoutAgreement
from xlapy.passes.multi_output_fusion import MultiOutputFusion
from xlapy.passes.pass_interface import Pass
from xlapy.passes.pipeline import FixedPoint, Pipeline, RunOptions
from xlapy.passes.reduction_splitter import ReductionSplitter
from xlapy.passes.scheduler import HloMemoryScheduler
from xlapy.passes.topk_decomposer import TopkDecomposer
from xlapy.passes.tuple_simplifier import TupleSimplifier


def default_pipeline(extra_passes: Iterable[Pass] = ()) -> Pipeline:
    """The optimisation pipeline; `extra_passes` (a backend's) run after fusion."""
    return Pipeline("optimization", [
        Defuser(),                  # a module fused elsewhere (XLA's output) is refused here
        TopkDecomposer(),           # backends need only a sort
        CallInliner(),              # one flat graph per computation, as fusion needs
        HloDCE(),
        FixedPoint("simplification", [
            AlgebraicSimplifier(),
            HloConstantFolding(),
            HloCSE(),
            TupleSimplifier(),
            HloDCE(),
        ]),
        ReductionSplitter(),        # reduced dims not adjacent: two row/column reductions
        InstructionFusion(),
        MultiOutputFusion(),
        HloCSE(),                   # merging fusions can leave twin producers inside one
        *extra_passes,
        LayoutAgreement(),          # one layout per buffer where buffers are passed on
        HloDCE(),
        FlattenCallGraph(),         # one caller per loop body/branch, as buffers need
        HloMemoryScheduler(),       # the order buffer assignment will see
    ])


PASS_REGISTRY: dict[str, tuple[Callable[[], list[Pass]], str]] = {
    "defuser": (lambda: [Defuser()], "replace every fusion by its fused computation"),
    "call-inliner": (lambda: [CallInliner()], "inline every call"),
    "topk-decomposer": (lambda: [TopkDecomposer()], "topk as a stable sort and slices"),
    "dce": (lambda: [HloDCE()], "remove dead instructions, fusion outputs and computations"),
    "cse": (lambda: [HloCSE()], "merge instructions that compute the same value"),
    "constant_folding": (lambda: [HloConstantFolding()],
                         "evaluate instructions whose operands are constants"),
    "tuple-simplifier": (lambda: [TupleSimplifier()],
                         "forward tuple elements to their readers"),
    "algsimp": (lambda: [AlgebraicSimplifier()], "algebraic simplification"),
    "reduction-splitter": (lambda: [ReductionSplitter()],
                           "a reduction over dims not adjacent as two reductions"),
    "fusion": (lambda: [InstructionFusion()], "producer-consumer fusion"),
    "flatten-call-graph": (lambda: [FlattenCallGraph()],
                           "a copy of each loop body/branch per call site"),
    "multi_output_fusion": (lambda: [MultiOutputFusion()],
                            "sibling and producer-consumer multi-output fusion"),
    "layout-agreement": (lambda: [LayoutAgreement()],
                         "one layout per buffer passed between instructions uncopied"),
    "hlo-memory-scheduler": (lambda: [HloMemoryScheduler()],
                             "order instructions to lower peak memory; marks the module "
                             "scheduled"),
}
"""name -> (factory giving [pass], one-line description)."""


def available_passes() -> dict[str, str]:
    """The registry names, with their descriptions."""
    return {name: text for name, (_, text) in PASS_REGISTRY.items()}


def make_passes(names: Iterable[str]) -> list[Pass]:
    """Pass objects for registry names; ValueError names an unknown pass."""
    passes = []
    for name in names:
        if name not in PASS_REGISTRY:
            raise ValueError(f"unknown pass {name!r}; known passes: "
                             f"{', '.join(PASS_REGISTRY)}")
        passes.extend(PASS_REGISTRY[name][0]())
    return passes


def optimize(module: HloModule, pipeline: Pipeline | None = None, *,
             extra_passes: Iterable[Pass] = (), flags=None, verify: bool | None = None,
             dumper=None, dump_prefix: str = "") -> bool:
    """Run `pipeline` (default: `default_pipeline(extra_passes)`) on `module` in place.

    `flags` are DebugOptions (default: `XLAPY_FLAGS`); `verify` overrides
    `--xlapy_verify_hlo_passes`. When the flags ask for dumps, writes
    `before_optimizations`, the per-pass files and `{dump_prefix}after_optimizations`
    (a backend passes e.g. "cpu_", as XLA:CPU names its dump). A backend that dumps
    more afterwards (buffer assignment) passes its own `dumper`
    (`xlapy.passes.dump.dumper_for`) so its files share the module's number.
    Returns whether anything changed.
    """
    flags = flags if flags is not None else debug_options()
    pipeline = pipeline if pipeline is not None else default_pipeline(extra_passes)
    dumper = dumper if dumper is not None else dumper_for(module, flags)
    hooks = (compile_profile.pass_hook,) if compile_profile.current() is not None else ()
    hooks += (dumper.pass_hook,) if dumper is not None else ()
    options = RunOptions.from_flags(flags, hooks=hooks, verify=verify)
    if dumper is not None:
        dumper.dump("before_optimizations")
    changed = pipeline.run_with(module, options)
    if dumper is not None:
        dumper.dump(f"{dump_prefix}after_optimizations")
        dumper.dump_decisions(f"{dump_prefix}after_optimizations")
    return changed
