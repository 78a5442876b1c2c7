"""Frontend errors that point at the user's own source line."""

from __future__ import annotations

import os
import sys

from xlapy.errors import CompileError

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MODELS_DIR = os.path.join(_PACKAGE_DIR, "models") + os.sep
"""The model zoo is written as a user writes a model: its lines are the user's."""


def user_frame() -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost caller outside xlapy itself (the
    model zoo, `xlapy.models`, counts as the user's code)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        users = _USER_CODE.get(code)
        if users is None:
            users = _is_user_code(code)
        if users:
            return code.co_filename, frame.f_lineno, code.co_name
        frame = frame.f_back
    return None


def _is_user_code(code) -> bool:
    filename = code.co_filename
    users = _USER_CODE[code] = ((not filename.startswith(_PACKAGE_DIR) or filename.startswith(
        _MODELS_DIR)) and not filename.startswith("<frozen"))
    if len(_USER_CODE) > 4096:
        _USER_CODE.clear()
    return users


_USER_CODE: dict = {}
"""Code object -> whether it is the user's (every value read in lazy mode names
the user's line: the frames up to it are looked up, not matched by name)."""


def where() -> str:
    """`file.py:12 (in f)` for the user's current line, or '' when unknown."""
    frame = user_frame()
    if frame is None:
        return ""
    filename, line, function = frame
    return f"{filename}:{line} (in {function})"


class ConcretizationError(CompileError, TypeError):
    """Python control flow or a conversion needed the value of a traced array."""


def compile_error(operation: str, why: str) -> CompileError:
    """A CompileError naming the operation, why it cannot compile and where."""
    location = where()
    return CompileError(f"{operation} cannot be compiled: {why}"
                        + (f"\n  at {location}" if location else ""))
