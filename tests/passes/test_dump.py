"""Dumps: XLA's file names and contents, filters, Graphviz clusters, HTML, stdout."""

import re

import pytest

from xlapy.flags import parse_flags
from xlapy.hlo import parse
from xlapy.passes.cse import HloCSE
from xlapy.passes.dce import HloDCE
from xlapy.passes.default_pipeline import optimize
from xlapy.passes.dump import ModuleDumper, dumper_for, module_to_dot, module_to_html
from xlapy.passes.pass_interface import Pass
from xlapy.passes.pipeline import Pipeline

TEXT = """
HloModule jit_f
ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] add(x, x)
  b = f32[4] add(x, x)
  dead = f32[4] negate(x)
  ROOT m = f32[4] multiply(a, b)
}
"""

FUSED = """
HloModule fused_module
fused_computation {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  m = f32[4] multiply(p0, p1)
  ROOT e = f32[4] exponential(m)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  f = f32[4] fusion(x, y), kind=kLoop, calls=fused_computation
  ROOT n = f32[4] negate(f)
}
"""

MODULE_FILE = re.compile(r"module_(\d{4})\.(.+)$")


def files(directory):
    return sorted(p.name for p in directory.iterdir())


def suffixes(directory, name="jit_f"):
    """The file names with the `module_NNNN.NAME.` prefix cut off (one module id)."""
    names = files(directory)
    ids = {MODULE_FILE.match(n).group(1) for n in names}
    assert len(ids) == 1, names
    return [n.split(f".{name}.", 1)[1] for n in names]


def small_pipeline():
    return Pipeline("optimization", [HloCSE(), HloDCE()])


def test_before_and_after_optimizations(tmp_path):
    module = parse(TEXT)
    optimize(module, small_pipeline(), flags=parse_flags(f"--xla_dump_to={tmp_path}"))
    assert suffixes(tmp_path) == ["after_optimizations.txt", "before_optimizations.txt"]
    before = next(tmp_path.glob("*before_optimizations.txt")).read_text()
    after = next(tmp_path.glob("*after_optimizations.txt")).read_text()
    assert parse(before).to_text() == parse(TEXT).to_text()
    assert after == module.to_text()
    assert "negate" in before and "negate" not in after


def test_module_ids_count_up(tmp_path):
    flags = parse_flags(f"--xla_dump_to={tmp_path}")
    optimize(parse(TEXT), small_pipeline(), flags=flags)
    optimize(parse(TEXT), small_pipeline(), flags=flags)
    ids = sorted({int(MODULE_FILE.match(n).group(1)) for n in files(tmp_path)})
    assert len(ids) == 2 and ids[1] > ids[0]


def test_pass_re_dot_star_dumps_the_start_and_each_pass_that_changed(tmp_path):
    module = parse(TEXT)
    pipeline = Pipeline("optimization", [HloCSE(), HloCSE(), HloDCE()])
    optimize(module, pipeline, flags=parse_flags(
        f"--xla_dump_to={tmp_path} --xla_dump_hlo_pass_re=.*"))
    assert suffixes(tmp_path) == [
        "0000.optimization.after_pipeline-start.before_cse.txt",
        "0001.optimization.after_cse.before_cse.txt",       # the second cse changed nothing
        "0002.optimization.after_dce.before_pipeline-end.txt",
        "after_optimizations.txt", "before_optimizations.txt"]
    after_cse = next(tmp_path.glob("*0001.optimization.after_cse*")).read_text()
    assert "b = " not in after_cse and "negate" in after_cse


def test_a_narrow_pass_re_dumps_matching_passes_even_unchanged(tmp_path):
    pipeline = Pipeline("optimization", [HloCSE(), HloDCE(), HloDCE()])
    optimize(parse(TEXT), pipeline, flags=parse_flags(
        f"--xla_dump_to={tmp_path} --xla_dump_hlo_pass_re=^dce$"))
    assert suffixes(tmp_path)[:3] == [
        "0000.optimization.after_cse.before_dce.txt",   # matches the next pass's name
        "0001.optimization.after_dce.before_dce.txt",
        "0002.optimization.after_dce.before_pipeline-end.txt"]


def test_nested_groups_dump_under_their_own_name(tmp_path):
    from xlapy.passes.pipeline import FixedPoint

    pipeline = Pipeline("optimization", [FixedPoint("simplification", [HloCSE(), HloDCE()])])
    optimize(parse(TEXT), pipeline, flags=parse_flags(
        f"--xla_dump_to={tmp_path} --xla_dump_hlo_pass_re=cse "
        f"--xla_dump_hlo_pipeline_re=simplification"))
    names = suffixes(tmp_path)
    assert names[0] == "0000.simplification.after_pipeline-start.before_cse.txt"
    assert all(".simplification." in n for n in names if n[0].isdigit())


def test_module_re_filters_modules(tmp_path):
    flags = parse_flags(f"--xla_dump_to={tmp_path} --xla_dump_hlo_module_re=^other")
    assert dumper_for(parse(TEXT), flags) is None
    optimize(parse(TEXT), small_pipeline(), flags=flags)
    assert files(tmp_path) == []
    assert dumper_for(parse(TEXT), parse_flags("--xla_dump_hlo_module_re=jit")) is not None
    assert dumper_for(parse(TEXT), parse_flags("")) is None


def test_dot_and_html_files(tmp_path):
    module = parse(FUSED)
    optimize(module, small_pipeline(), flags=parse_flags(
        f"--xla_dump_to={tmp_path} --xla_dump_hlo_as_dot --xla_dump_hlo_as_html"))
    assert suffixes(tmp_path, "fused_module") == [
        "after_optimizations.dot", "after_optimizations.html",
        "after_optimizations.top_level.html", "before_optimizations.dot",
        "before_optimizations.html"]  # a format flag alone: no text
    dot = next(tmp_path.glob("*after_optimizations.dot")).read_text()
    assert dot.startswith("digraph G {") and "subgraph cluster_" in dot
    page = next(tmp_path.glob("*after_optimizations.html")).read_text()
    assert "<!DOCTYPE html>" in page and "digraph G" in page and "fused_computation" in page
    top = next(tmp_path.glob("*top_level.html")).read_text()
    assert "subgraph cluster_" not in top


def test_dot_draws_fusions_as_clusters_wired_through_their_parameters():
    dot = module_to_dot(parse(FUSED))
    ids = dict(re.findall(r'(n\d+) \[label="([^\\"]+)', dot))
    by_name = {name: node for node, name in ids.items()}
    cluster = dot[dot.index("subgraph cluster_"):dot.index("}", dot.index("subgraph cluster_"))]
    assert 'label="f\\nkind=kLoop"' in cluster
    assert by_name["p0"] in cluster and by_name["e"] in cluster and by_name["x"] not in cluster
    edges = set(re.findall(r"(n\d+) -> (n\d+);", dot))
    assert (by_name["x"], by_name["p0"]) in edges and (by_name["y"], by_name["p1"]) in edges
    assert (by_name["e"], by_name["n"]) in edges  # the fused root feeds the fusion's user
    closed = module_to_dot(parse(FUSED), show_fusions=False)
    assert "cluster" not in closed and '"f\\nfusion' in closed


def test_html_is_escaped():
    page = module_to_html(parse(TEXT), "a<b")
    assert "<title>a&lt;b</title>" in page


def test_stdout_dumps(tmp_path, capsys):
    optimize(parse(TEXT), small_pipeline(), flags=parse_flags("--xla_dump_to=-"))
    out = capsys.readouterr().out
    assert re.search(r"\*\*\* Begin module_\d{4}\.jit_f\.before_optimizations\.txt \*\*\*", out)
    assert "*** End " in out and "HloModule jit_f" in out
    optimize(parse(TEXT), small_pipeline(), flags=parse_flags("--xla_dump_hlo_as_text"))
    assert "after_optimizations.txt ***" in capsys.readouterr().out
    optimize(parse(TEXT), small_pipeline(), flags=parse_flags("--xla_dump_hlo_as_dot"))
    assert capsys.readouterr().out == ""  # never Graphviz on stdout


def test_short_text_form(tmp_path):
    optimize(parse(TEXT), small_pipeline(), flags=parse_flags(
        f"--xla_dump_to={tmp_path} --xla_dump_hlo_as_long_text=false"))
    after = next(tmp_path.glob("*after_optimizations.txt")).read_text()
    assert "%" not in after and "multiply(a, a)" in after


class Explaining(Pass):
    name = "fusion"

    def __init__(self):
        self.decisions = []

    def run(self, module):
        x = module.entry_computation.parameters[0]
        self.decisions = [(x, module.entry_computation.root_instruction, "not fused: test")]
        return False


def test_decisions_of_passes_are_written(tmp_path):
    optimize(parse(TEXT), Pipeline("optimization", [Explaining()]),
             flags=parse_flags(f"--xla_dump_to={tmp_path}"))
    text = next(tmp_path.glob("*after_optimizations-decisions.txt")).read_text()
    assert text == "optimization/fusion:\n  x -> m: not fused: test\n"


def test_dump_text_for_other_tools(tmp_path):
    dumper = ModuleDumper(parse(TEXT), parse_flags(f"--xla_dump_to={tmp_path}"))
    [path] = dumper.dump_text("after_optimizations-buffer-assignment.txt", "allocations\n")
    assert path.endswith(f"module_{dumper.module_id:04d}.jit_f."
                         "after_optimizations-buffer-assignment.txt")


def test_long_names_and_odd_characters():
    module = parse(TEXT)
    module.name = "jit/f[0] x"
    dumper = ModuleDumper(module, parse_flags("--xla_dump_to=/tmp"))
    assert dumper.filename("s.txt") == f"module_{dumper.module_id:04d}.jit_f_0__x.s.txt"
    module.name = "n" * 300
    assert dumper.filename("s.txt") == f"module_{dumper.module_id:04d}.s.txt"


def test_an_unwritable_directory_is_a_warning(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.warns(UserWarning, match="could not write the dump"):
        optimize(parse(TEXT), small_pipeline(),
                 flags=parse_flags(f"--xla_dump_to={blocker / 'sub'}"))


def test_a_backend_keeps_one_dumper_for_its_later_files(tmp_path):
    flags = parse_flags(f"--xla_dump_to={tmp_path}")
    module = parse(TEXT)
    dumper = dumper_for(module, flags)
    optimize(module, small_pipeline(), flags=flags, dumper=dumper, dump_prefix="cpu_")
    dumper.dump_text("cpu_after_optimizations-buffer-assignment.txt", "temps\n")
    assert suffixes(tmp_path) == ["before_optimizations.txt", "cpu_after_optimizations-buffer-assignment.txt",
                                  "cpu_after_optimizations.txt"]
