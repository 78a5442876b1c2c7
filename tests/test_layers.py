"""The package's layers: each imports only from those below it, at module level.

The order is XLA's: HLO (with its evaluator) at the bottom, analyses and passes
above it, the LLVM lowering shared by targets, the backends, the frontend,
autodiff, jit/aot, and the command line on top (docs/internals.md draws it).
Every import in `xlapy/` is read, those inside functions too: an import inside
a function is allowed only for an optional dependency, with a comment saying so.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "xlapy"

LAYERS: list[tuple[str, ...]] = [
    ("xlapy.errors", "xlapy.flags", "xlapy.version", "xlapy.config"),
    ("xlapy.distributed",),
    ("xlapy.hlo", "xlapy.stablehlo"),
    ("xlapy.analysis",),
    ("xlapy.passes",),
    ("xlapy.codegen",),
    ("xlapy.backends.base",),
    ("xlapy.backends.interpreter", "xlapy.backends.cpu"),
    ("xlapy.backends", "xlapy.runtime"),
    ("xlapy.core", "xlapy.datasets"),
    ("xlapy.lax",),
    ("xlapy.numpy",),
    ("xlapy.nn", "xlapy.random"),
    ("xlapy.autodiff",),
    ("xlapy.jit", "xlapy.aot", "xlapy.profiler", "xlapy.report"),
    ("xlapy.sharding", "xlapy.spmd"),
    ("xlapy",),
    ("xlapy.models", "xlapy.fuzz"),
    ("xlapy.frontends",),
    ("xlapy.tools", "xlapy.cli"),
]
"""Lowest first. A module belongs to the longest prefix listed; modules of one
layer may import each other (the interpreter and CPU backends do not)."""

SIBLINGS_APART = {("xlapy.backends.interpreter", "xlapy.backends.cpu"),
                  ("xlapy.backends.cpu", "xlapy.backends.interpreter")}


def _unit(module: str) -> tuple[int, str]:
    """(layer number, the listed prefix) that `module` belongs to."""
    best = None
    for number, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and \
                    (best is None or len(prefix) > len(best[1])):
                best = (number, prefix)
    assert best is not None, module
    return best


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: pathlib.Path):
    """(imported module, line, inside a function, has a comment) for each import."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source)
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # `from xlapy import lax` imports the module xlapy.lax
            names = [f"{base}.{alias.name}" if base == "xlapy" else base for alias in node.names]
        else:
            continue
        line = lines[node.lineno - 1]
        above = lines[node.lineno - 2] if node.lineno > 1 else ""
        commented = "#" in line or above.strip().startswith("#")
        for name in names:
            yield name, node.lineno, id(node) in inside, commented


def _all_imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for name, line, inside, commented in _imports(path):
            yield path.relative_to(PACKAGE.parent), module, name, line, inside, commented


def test_every_module_has_a_layer():
    for path in PACKAGE.rglob("*.py"):
        _unit(_module_name(path))


def test_imports_go_down_the_layers():
    upward = []
    for where, module, name, line, _, _ in _all_imports():
        if not name.startswith("xlapy"):
            continue
        (mine, my_unit), (theirs, their_unit) = _unit(module), _unit(name)
        if theirs > mine or (my_unit, their_unit) in SIBLINGS_APART:
            upward.append(f"{where}:{line}: {module} ({my_unit}) imports {name} ({their_unit})")
    assert not upward, "imports that go up the layers:\n" + "\n".join(upward)


def test_imports_inside_functions_are_optional_dependencies_only():
    hidden = []
    for where, _, name, line, inside, commented in _all_imports():
        if not inside:
            continue
        if name.startswith("xlapy"):
            hidden.append(f"{where}:{line}: {name} (xlapy's own: import it at module level)")
        elif not commented:
            hidden.append(f"{where}:{line}: {name} (say why it is imported late)")
    assert not hidden, "imports inside functions:\n" + "\n".join(hidden)
