"""The report's two pictures, laid out here in Python so the page needs no
script: the compiled module as a graph (kernels in layers, each below what it
reads) and the values alive over the schedule, with the peak marked."""

from __future__ import annotations

from html import escape

_BOX_W, _BOX_H, _GAP_X, _GAP_Y = 190, 42, 24, 46
_COLORS = {"fusion": "#cfe3ff", "parameter": "#e8e8e8", "dot": "#ffe0b3",
           "convolution": "#ffe0b3", "reduce": "#d9f2d9", "tuple": "#f4f4f4"}


def kernel_graph(nodes: list[tuple[str, str, str]], edges: list[tuple[str, str]]) -> str:
    """An SVG of the nodes (name, opcode, label) in layers by longest path from
    the inputs, edges from each operand's box to its user's."""
    level: dict[str, int] = {}
    operands: dict[str, list[str]] = {}
    for source, target in edges:
        operands.setdefault(target, []).append(source)
    for name, _, _ in nodes:   # nodes come in schedule order: operands first
        level[name] = 1 + max((level.get(o, 0) for o in operands.get(name, [])), default=-1)
    rows: dict[int, list[str]] = {}
    for name, _, _ in nodes:
        rows.setdefault(level[name], []).append(name)
    place = {}
    for row, names in rows.items():
        for k, name in enumerate(names):
            place[name] = (10 + k * (_BOX_W + _GAP_X), 10 + row * (_BOX_H + _GAP_Y))
    width = max((x for x, _ in place.values()), default=0) + _BOX_W + 20
    height = max((y for _, y in place.values()), default=0) + _BOX_H + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="the compiled module as a graph">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
             'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#777"/>'
             '</marker></defs>']
    for source, target in edges:
        if source in place and target in place:
            (x1, y1), (x2, y2) = place[source], place[target]
            parts.append(f'<line x1="{x1 + _BOX_W / 2}" y1="{y1 + _BOX_H}" x2="{x2 + _BOX_W / 2}" '
                         f'y2="{y2}" stroke="#999" marker-end="url(#arrow)"/>')
    for name, opcode, label in nodes:
        x, y = place[name]
        fill = _COLORS.get(opcode, "#fff7d6")
        parts.append(f'<g><title>{escape(name)}: {escape(label)}</title>'
                     f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="5" '
                     f'fill="{fill}" stroke="#555"/>'
                     f'<text x="{x + 6}" y="{y + 16}" class="name">{escape(_clip(name, 26))}'
                     f'</text><text x="{x + 6}" y="{y + 32}" class="label">'
                     f'{escape(_clip(label, 30))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def live_values(values, peak_bytes: int, peak_at: int) -> str:
    """An SVG of each value (name, size, start, end, kind) as a bar over the
    schedule positions it is alive, stacked by size at its start, the peak's
    position marked."""
    length = max((v.end for v in values), default=0) + 1
    column = max(12, min(40, 900 // max(length, 1)))
    bar_h = 16
    width = 160 + length * column + 20
    height = 40 + len(values) * (bar_h + 4) + 20
    scale = max((v.size for v in values), default=1) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="buffers" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="values alive over the schedule">']
    px = 160 + peak_at * column
    parts.append(f'<rect x="{px}" y="20" width="{column}" height="{height - 40}" '
                 f'fill="#ffd6d6"/><text x="{px}" y="14" class="label">peak: '
                 f'{_bytes(peak_bytes)} at position {peak_at}</text>')
    colors = {"parameter": "#9ecae1", "output": "#a1d99b", "temporary": "#fdae6b"}
    for k, v in enumerate(values):
        y = 30 + k * (bar_h + 4)
        x = 160 + v.start * column
        w = (v.end - v.start + 1) * column
        opacity = 0.45 + 0.55 * (v.size / scale)
        parts.append(f'<g><title>{escape(v.name)}: {_bytes(v.size)}, {v.kind}, alive '
                     f'{v.start}..{v.end}</title><text x="4" y="{y + 12}" class="label">'
                     f'{escape(_clip(v.name, 22))}</text><rect x="{x}" y="{y}" width="{w}" '
                     f'height="{bar_h}" fill="{colors[v.kind]}" fill-opacity="{opacity:.2f}" '
                     f'stroke="#666"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
