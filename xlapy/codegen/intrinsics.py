"""LLVM intrinsics and libm functions, declared once per module."""

from __future__ import annotations

import llvmlite.ir as ir


def _suffix(t: ir.Type) -> str:
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{_suffix(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    if isinstance(t, ir.PointerType):
        return "p0"
    return {"float": "f32", "double": "f64", "half": "f16"}[str(t)]


def intrinsic(builder: ir.IRBuilder, name: str, args: list, ret: ir.Type | None = None,
              overloads: list | None = None, fastmath: tuple = ()) -> ir.Value:
    """Call `llvm.<name>.<type suffixes>`; overloaded on the first argument's type
    unless `overloads` names the types; `fastmath` flags go on the call."""
    module = builder.module
    overloads = overloads if overloads is not None else [args[0].type]
    full = "llvm." + name + "".join("." + _suffix(t) for t in overloads)
    fn = module.globals.get(full)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret or args[0].type, [a.type for a in args]),
                         full)
    return builder.call(fn, args, fastmath=fastmath)


def libm(builder: ir.IRBuilder, name: str, args: list) -> ir.Value:
    """Call the C math library's `name` (double or float by the argument type)."""
    module = builder.module
    t = args[0].type
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(t, [a.type for a in args]), name)
    return builder.call(fn, args)
