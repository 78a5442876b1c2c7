"""HLO dumps with XLA's file names, driven by `XLAPY_FLAGS` (XLA's dump flags).

With `--xla_dump_to=DIR`, each compiled module gets (xla/service/dump.cc):

    module_NNNN.NAME.before_optimizations.txt
    module_NNNN.NAME.after_optimizations.txt
    module_NNNN.NAME.SSSS.PIPELINE.after_PASS.before_NEXT.txt   (--xla_dump_hlo_pass_re)

NNNN is the module's id in this process and SSSS the module's dump step,
both zero-padded to four digits; `PIPELINE` is the pipeline that ran the pass
and `NEXT` the pass after it (`pipeline-start`/`pipeline-end` at the ends).
With `--xla_dump_hlo_pass_re=.*` only passes that changed the module are
dumped (XLA's rule); a narrower pattern dumps every matching pass.
`--xla_dump_hlo_as_dot` writes the same names ending in `.dot` (Graphviz,
fusions drawn as clusters holding their fused computations),
`--xla_dump_hlo_as_html` `.html` pages (and `.top_level.html`, fusions
closed, for after_optimizations). With no format flag text is written; with a
format flag but no directory, or `--xla_dump_to=-`, text goes to stdout
between `*** Begin FILE ***` and `*** End FILE ***` lines.
`--xla_dump_hlo_module_re` limits all of this to matching module names.

Passes that explain themselves (a `decisions` list of (producer, consumer,
reason), as fusion keeps) get their reasons written to
`module_NNNN.NAME.after_optimizations-decisions.txt`.

A dump that cannot be written is a warning, never a failed compilation.
"""

from __future__ import annotations

import html
import itertools
import os
import re
import sys
import warnings

from xlapy.flags import debug_options
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import DATA_MOVEMENT, ELEMENTWISE, REDUCTION, Opcode
from xlapy.passes.pipeline import PIPELINE_START, PassEvent

_MODULE_IDS = itertools.count()
"""Process-wide module ids, as XLA numbers its modules (HloModule::unique_id)."""
_LAST_IDS: dict[str, int] = {}
_UNSAFE_FILE_CHARACTERS = re.compile(r"[/\\\[\] ]")


def filename_for(module: HloModule, suffix: str) -> str:
    """`module_NNNN.NAME.SUFFIX` under the number the latest dump of this module's
    name got (what later files, such as execution snapshots and the report, are
    filed under), or a new number when it was not dumped."""
    number = _LAST_IDS.get(module.name)
    if number is None:
        number = _LAST_IDS[module.name] = next(_MODULE_IDS)
    return _file_name(number, module.name, suffix)


def _file_name(number: int, module_name: str, suffix: str) -> str:
    """`module_NNNN.NAME.SUFFIX`, without the name when that passes 255 characters."""
    name = f"module_{number:04d}.{module_name}.{suffix}"
    if len(name) > 255:
        name = f"module_{number:04d}.{suffix}"
    return _UNSAFE_FILE_CHARACTERS.sub("_", name)



class ModuleDumper:
    """Writes the dumps of one module as it goes through compilation."""

    def __init__(self, module: HloModule, flags):
        self.module = module
        self.flags = flags
        self.module_id = next(_MODULE_IDS)
        _LAST_IDS[module.name] = self.module_id
        self._steps = itertools.count()
        self._decisions: list[tuple[str, str, list]] = []
        formats = flags.xla_dump_hlo_as_text or flags.xla_dump_hlo_as_dot or \
            flags.xla_dump_hlo_as_html
        self.as_text = flags.xla_dump_hlo_as_text or not formats
        self.directory = flags.xla_dump_to or ("-" if formats else "")
        self.written: list[str] = []

    @property
    def to_stdout(self) -> bool:
        return self.directory == "-"

    # -- file names -----------------------------------------------------------------------
    def filename(self, suffix: str) -> str:
        """`module_NNNN.NAME.SUFFIX`, without the name when that passes 255 characters."""
        return _file_name(self.module_id, self.module.name, suffix)

    # -- dumps ----------------------------------------------------------------------------
    def dump(self, suffix: str) -> list[str]:
        """The module now, in every format asked for, under `suffix`; the paths written."""
        base = self.filename(suffix)
        paths = []
        if self.as_text:
            long_form = self.flags.xla_dump_hlo_as_long_text
            paths += self._write(base + ".txt", self.module.to_text(short=not long_form))
        if self.flags.xla_dump_hlo_as_dot:
            paths += self._write(base + ".dot", module_to_dot(self.module, base), text=False)
        if self.flags.xla_dump_hlo_as_html:
            paths += self._write(base + ".html", module_to_html(self.module, base), text=False)
            if "after_optimizations" in suffix:
                page = module_to_html(self.module, base, show_fusions=False)
                paths += self._write(base + ".top_level.html", page, text=False)
        return paths

    def dump_text(self, suffix: str, text: str) -> list[str]:
        """Any text under this module's name (e.g. `after_optimizations-buffer-assignment.txt`)."""
        return self._write(self.filename(suffix), text)

    def pass_hook(self, event: PassEvent) -> None:
        """The pipeline hook: dump after the passes `--xla_dump_hlo_pass_re` matches,
        and keep the reasons of passes that give them."""
        decisions = getattr(event.pass_, "decisions", None)
        if decisions:
            self._decisions.append((event.pipeline, event.after, list(decisions)))
        if not self._should_dump_pass(event):
            return
        step = next(self._steps)
        self.dump(f"{step:04d}.{event.pipeline}.after_{event.after}.before_{event.before}")

    def dump_decisions(self, suffix: str) -> list[str]:
        """The collected pass decisions as `SUFFIX-decisions.txt` (nothing if none)."""
        if not self._decisions or not self.as_text:
            return []
        lines = []
        for pipeline, pass_name, decisions in self._decisions:
            lines.append(f"{pipeline}/{pass_name}:")
            lines.extend("  " + _decision_text(d) for d in decisions)
        return self.dump_text(f"{suffix}-decisions.txt", "\n".join(lines) + "\n")

    def _should_dump_pass(self, event: PassEvent) -> bool:
        pattern = self.flags.xla_dump_hlo_pass_re
        if not pattern:
            return False
        if not (re.search(pattern, event.after) or re.search(pattern, event.before)):
            return False
        pipelines = self.flags.xla_dump_hlo_pipeline_re
        if pipelines and not re.search(pipelines, event.pipeline):
            return False
        # XLA: with ".*", only passes that changed the module (the start always dumps).
        return event.after == PIPELINE_START or event.changed or pattern != ".*"

    def _write(self, filename: str, contents: str, text: bool = True) -> list[str]:
        if self.to_stdout:
            if text:
                sys.stdout.write(f"*** Begin {filename} ***\n{contents}\n*** End {filename} ***\n")
            return []
        path = os.path.join(self.directory, filename)
        try:
            os.makedirs(self.directory, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(contents)
        except OSError as e:
            warnings.warn(f"could not write the dump {path}: {e}", stacklevel=3)
            return []
        self.written.append(path)
        return [path]


def should_dump_module(module_name: str, flags) -> bool:
    """XLA's rule: a module pattern decides; else any dump flag dumps every module."""
    if flags.xla_dump_hlo_module_re:
        return re.search(flags.xla_dump_hlo_module_re, module_name) is not None
    return bool(flags.xla_dump_hlo_pass_re or flags.xla_dump_to or flags.xla_dump_hlo_as_text
                or flags.xla_dump_hlo_as_dot or flags.xla_dump_hlo_as_html)


def dumper_for(module: HloModule, flags=None) -> ModuleDumper | None:
    """A dumper for `module` if the flags (default `XLAPY_FLAGS`) ask for its dumps."""
    if flags is None:
        flags = debug_options()
    return ModuleDumper(module, flags) if should_dump_module(module.name, flags) else None


def _decision_text(decision) -> str:
    """`producer -> consumer: reason` for a (producer, consumer, reason) triple."""
    if not isinstance(decision, tuple):
        return str(decision)
    parts = [getattr(part, "name", None) or str(part) for part in decision]
    if len(parts) == 3:
        return f"{parts[0]} -> {parts[1]}: {parts[2]}"
    return ": ".join(parts)


# -- Graphviz ---------------------------------------------------------------------------
def _color(instruction: HloInstruction) -> str:
    op = instruction.opcode
    if op is Opcode.PARAMETER:
        return "#ffcc80"  # orange: inputs
    if op is Opcode.CONSTANT:
        return "#e0e0e0"
    if op in (Opcode.DOT, Opcode.CONVOLUTION):
        return "#90caf9"  # blue: the expensive ops
    if op in REDUCTION:
        return "#a5d6a7"
    if op in DATA_MOVEMENT:
        return "#fff59d"
    if op in ELEMENTWISE:
        return "#ffffff"
    return "#ce93d8"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _label(instruction: HloInstruction) -> str:
    lines = [instruction.name, instruction.opcode.value]
    if instruction.opcode is Opcode.PARAMETER:
        lines[1] = f"parameter {instruction.parameter_number}"
    if instruction.opcode is Opcode.CONSTANT and instruction.shape.is_scalar \
            and instruction.literal is not None:
        lines[1] = f"constant {instruction.literal}"
    callees = [c.name for c in instruction.called_computations]
    if callees and instruction.opcode is not Opcode.FUSION:
        lines.append("calls " + ", ".join(callees))
    lines.append(instruction.shape.to_text(print_layout=False))
    return "\\n".join(_escape(line) for line in lines)


class _DotWriter:
    """Draws a computation; each fusion becomes a cluster holding its fused computation,
    whose parameters take the fusion's operands and whose root feeds its users."""

    def __init__(self, show_fusions: bool):
        self.show_fusions = show_fusions
        self.lines: list[str] = []
        self.edges: list[str] = []  # drawn after every node, outside any cluster
        self.ids: dict[int, str] = {}
        self.counter = itertools.count()

    def node_id(self, instruction: HloInstruction) -> str:
        if id(instruction) not in self.ids:
            self.ids[id(instruction)] = f"n{next(self.counter)}"
        return self.ids[id(instruction)]

    def output_of(self, instruction: HloInstruction) -> HloInstruction:
        """The node an edge from `instruction` starts at (a drawn fusion's root)."""
        while self._drawn_open(instruction):
            instruction = instruction.attr("calls").root_instruction
        return instruction

    def _drawn_open(self, instruction: HloInstruction) -> bool:
        return self.show_fusions and instruction.opcode is Opcode.FUSION \
            and instruction.attr("calls") is not None

    def computation(self, computation: HloComputation, indent: str,
                    inputs: list[HloInstruction] | None = None) -> None:
        for instruction in computation.instructions:
            if self._drawn_open(instruction):
                self.fusion(instruction, indent)
                continue
            style = ", penwidth=2" if instruction is computation.root_instruction else ""
            attributes = f'label="{_label(instruction)}", fillcolor="{_color(instruction)}"'
            self.lines.append(f"{indent}{self.node_id(instruction)} [{attributes}{style}];")
            if instruction.opcode is Opcode.PARAMETER and inputs is not None:
                self.edge(self.output_of(inputs[instruction.parameter_number]), instruction)
            for operand in instruction.operands:
                self.edge(self.output_of(operand), instruction)

    def fusion(self, fusion: HloInstruction, indent: str) -> None:
        kind = fusion.attr("kind")
        kind_text = f"kind={kind.value}" if kind is not None else ""
        self.lines.append(f"{indent}subgraph cluster_{self.node_id(fusion)} {{")
        self.lines.append(f'{indent}  label="{_escape(fusion.name)}\\n{kind_text}"; '
                          'style="filled,rounded"; fillcolor="#f5f5f5";')
        self.computation(fusion.attr("calls"), indent + "  ", inputs=fusion.operands)
        self.lines.append(f"{indent}}}")

    def edge(self, source: HloInstruction, target: HloInstruction) -> None:
        self.edges.append(f"  {self.node_id(source)} -> {self.node_id(target)};")


def module_to_dot(module: HloModule, label: str = "", show_fusions: bool = True) -> str:
    """The entry computation as a Graphviz digraph, fusions as clusters (or, with
    `show_fusions=False`, as single nodes)."""
    writer = _DotWriter(show_fusions)
    writer.computation(module.entry_computation, "  ")
    header = [
        "digraph G {",
        "  rankdir=TB; compound=true;",
        f'  label="{_escape(label or module.name)}"; labelloc=t;',
        '  node [shape=box, style="filled,rounded", fontname="Helvetica", fontsize=10];',
    ]
    return "\n".join(header + writer.lines + writer.edges + ["}"]) + "\n"


_HTML = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>body {{ font-family: sans-serif; }} pre {{ background: #f5f5f5; padding: 1em; }}</style>
</head>
<body>
<h1>{title}</h1>
<div id="graph"></div>
<script type="text/vnd.graphviz" id="dot">
{dot}
</script>
<script src="https://unpkg.com/d3@7/dist/d3.min.js"></script>
<script src="https://unpkg.com/@hpcc-js/wasm@2/dist/graphviz.umd.js"></script>
<script src="https://unpkg.com/d3-graphviz@5/build/d3-graphviz.js"></script>
<script>
  // Renders the graph when the viewer is online, as XLA's HTML dumps do; the
  // HLO text below is the same module without a network.
  if (window.d3 && d3.select("#graph").graphviz) {{
    d3.select("#graph").graphviz().renderDot(document.getElementById("dot").textContent);
  }}
</script>
<h2>HLO</h2>
<pre>{text}</pre>
</body>
</html>
"""


def module_to_html(module: HloModule, title: str = "", show_fusions: bool = True) -> str:
    """A page showing the graph (rendered in the browser) and the module's text."""
    dot = module_to_dot(module, title, show_fusions).replace("</", "<\\/")  # script-safe
    return _HTML.format(title=html.escape(title or module.name), dot=dot,
                        text=html.escape(module.to_text()))
