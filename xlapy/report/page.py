"""The compile report as one HTML page: styles inline, pictures as inline SVG,
no script and no link to anything outside the file, so it opens offline and
can be mailed or attached to a bug."""

from __future__ import annotations

from html import escape

from xlapy.report import svg
from xlapy.report.collect import ReportData

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 2em 3em; color: #222; }
h1 { font-size: 1.5em; margin: 0.8em 0 0.2em; } h2 { border-bottom: 1px solid #ccc; }
nav a { margin-right: 1.2em; } table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #ddd; padding: 2px 8px; vertical-align: top; text-align: left; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12px/1.35 ui-monospace, monospace; } pre { overflow-x: auto; margin: 0; }
.diff .add { background: #e6ffec; } .diff .del { background: #ffebe9; }
.diff .hunk { color: #6a737d; } details { margin: 0.3em 0; } summary { cursor: pointer; }
svg text.name { font: 12px ui-monospace, monospace; } svg text.label { font: 11px sans-serif; }
.scroll { overflow: auto; max-height: 640px; border: 1px solid #eee; }
.muted { color: #777; }
"""


def render(data: ReportData) -> str:
    sections = [("sources", "Source lines and the HLO they produced", _sources(data)),
                ("passes", "Passes that changed the module", _passes(data)),
                ("fusion", "Fusion decisions and the compiled kernels", _fusion(data)),
                ("buffers", "Values alive over the schedule", _buffers(data)),
                ("costs", "Kernel costs and this machine's floor", _costs(data)),
                ("fallbacks", "Lowering fallbacks", _fallbacks(data))]
    nav = "".join(f'<a href="#{key}">{escape(title)}</a>' for key, title, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{escape(title)}</h2>{html}</section>'
                   for key, title, html in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            f'style-src \'unsafe-inline\'; img-src data:">'
            f"<title>xlapy report: {escape(data.module_name)}</title><style>{_STYLE}</style>"
            f"</head><body><h1>{escape(data.module_name)}</h1><p class=\"muted\">compiled for "
            f"{escape(data.backend)}; optimised in {data.compile_seconds:.3f} s by "
            f"{len(data.passes)} changing passes</p><nav>{nav}</nav>{body}</body></html>")


def _sources(data: ReportData) -> str:
    if not data.sources:
        return ("<p>The module carries no source locations (its metadata names no "
                "source_file/source_line); its instructions:</p>"
                f"<pre>{escape(data.original_text)}</pre>")
    rows = "".join(f"<tr><td><code>{escape(_short_path(f))}:{line}</code></td>"
                   f"<td><pre>{escape(code.strip())}</pre></td>"
                   f"<td><pre>{escape(chr(10).join(_trim(h) for h in hlo))}</pre></td></tr>"
                   for f, line, code, hlo in data.sources)
    return ("<table><tr><th>where</th><th>source</th><th>HLO instructions</th></tr>"
            f"{rows}</table>")


def _passes(data: ReportData) -> str:
    if not data.passes:
        return "<p>No pass changed the module.</p>"
    items = []
    for step in data.passes:
        lines = []
        for line in step.diff:
            kind = "add" if line.startswith("+") and not line.startswith("+++") else \
                "del" if line.startswith("-") and not line.startswith("---") else \
                "hunk" if line.startswith("@@") else ""
            lines.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line))
        changed = sum(1 for line in step.diff if line[:1] in "+-") - 2
        items.append(f"<details><summary><code>{escape(step.pipeline)}/"
                     f"{escape(step.name)}</code>: {step.seconds * 1e3:.2f} ms, "
                     f"{max(changed, 0)} lines changed</summary>"
                     f'<pre class="diff">{chr(10).join(lines)}</pre></details>')
    return "".join(items)


def _fusion(data: ReportData) -> str:
    rows = "".join(f"<tr><td><code>{escape(p)}</code></td><td><code>{escape(a)}</code></td>"
                   f"<td><code>{escape(b)}</code></td><td>{escape(why)}</td></tr>"
                   for p, a, b, why in data.decisions)
    table = ("<table><tr><th>pass</th><th>producer</th><th>consumer</th><th>decision</th>"
             f"</tr>{rows}</table>") if rows else "<p>No pass recorded a decision.</p>"
    graph = svg.kernel_graph(data.nodes, data.edges)
    opened = " open" if len(data.decisions) <= 30 else ""
    return (f"<details{opened}><summary>{len(data.decisions)} decisions</summary>{table}"
            f"</details><h3>The compiled module</h3><div class=\"scroll\">{graph}</div>")


def _buffers(data: ReportData) -> str:
    peak, at = data.peak
    picture = svg.live_values(data.values, peak, at)
    assignment = (f"<details><summary>buffer assignment</summary><pre>"
                  f"{escape(data.assignment_text)}</pre></details>") \
        if data.assignment_text else ""
    return (f"<p>Each value of the compiled entry computation, from the instruction that "
            f"defines it to its last use (parameters from the start, outputs to the end); "
            f"the peak, {svg._bytes(peak)}, at schedule position {at}.</p>"
            f"<div class=\"scroll\">{picture}</div>{assignment}")


def _costs(data: ReportData) -> str:
    flop_rate, byte_rate = data.machine
    head = ("<tr><th>kernel</th><th>opcode</th><th>flops</th><th>bytes</th>"
            "<th>floor µs</th>" + ("<th>measured µs</th><th>floor / measured</th>"
                                   if data.profiled else "") + "</tr>")
    rows = []
    for k in data.kernels:
        cells = (f"<td><code title=\"{escape(k.text)}\">{escape(k.name)}</code></td>"
                 f"<td>{escape(k.opcode)}{(': ' + escape(', '.join(k.fused))) if k.fused else ''}"
                 f"</td><td class=\"num\">{k.flops:,.0f}</td><td class=\"num\">{k.bytes:,.0f}"
                 f"</td><td class=\"num\">{k.floor_seconds * 1e6:.2f}</td>")
        if data.profiled:
            measured = k.measured_seconds
            cells += (f"<td class=\"num\">{measured * 1e6:.2f}</td><td class=\"num\">"
                      f"{k.floor_seconds / measured:.0%}</td>" if measured else
                      "<td>-</td><td>-</td>")
        rows.append(f"<tr>{cells}</tr>")
    note = "" if data.profiled else (
        "<p class=\"muted\">Not profiled: with <code>--xla_hlo_profile</code> (or "
        "<code>xlapy report --profile</code>) each kernel's measured time and the fraction "
        "of the floor it reaches are shown.</p>")
    return (f"<p>The floor of a kernel is the longer of its flops at {flop_rate / 1e9:.1f} "
            f"GFLOP/s and its bytes at {byte_rate / 1e9:.1f} GB/s, the rates NumPy reaches on "
            f"this machine (a 512³ float32 product, a 32 MiB copy).</p>{note}"
            f"<table>{head}{''.join(rows)}</table>")


def _fallbacks(data: ReportData) -> str:
    if not data.fallbacks:
        return ("<p>None: every instruction is compiled code (no instruction runs in the HLO "
                "evaluator).</p>")
    rows = "".join(f"<tr><td><code>{escape(name)}</code></td><td>{escape(why)}</td></tr>"
                   for name, why in data.fallbacks)
    return f"<table><tr><th>instruction</th><th>why the evaluator runs it</th></tr>{rows}</table>"


def _short_path(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def _trim(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."
