"""frazil raises FrazilError subclasses only (several also derive from the matching
builtin, so ``except ValueError`` keeps working): no bare ValueError, TypeError,
KeyError, FileNotFoundError... anywhere in python/frazil."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import frazil

PACKAGE = Path(frazil.__file__).parent

# Abstract methods raise NotImplementedError: a programming error, never a user's.
ALLOWED = {"NotImplementedError"}

BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
} - ALLOWED


def _offences(path: Path, root: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    scopes: list[tuple[ast.AST, str]] = [
        (node, getattr(node, "name", ""))
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]

    def scope_of(node: ast.AST) -> str:
        line = getattr(node, "lineno", 0)
        inside = [name for fn, name in scopes if fn.lineno <= line <= (fn.end_lineno or fn.lineno)]
        return inside[-1] if inside else ""

    for node in ast.walk(tree):
        # `raise ValueError(...)`, `raise ValueError`, and helpers that build one
        # (`return TypeError(...)`): any call or raise of a builtin exception class.
        target: ast.AST | None = None
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        elif isinstance(node, ast.Call):
            target = node.func
        if isinstance(target, ast.Name) and target.id in BUILTIN_EXCEPTIONS:
            # A module's __getattr__ (PEP 562) must raise AttributeError: the protocol.
            if scope_of(node) == "__getattr__" and target.id == "AttributeError":
                continue
            relative = path.relative_to(root)
            found.add(f"{relative}:{node.lineno}: {target.id}")
    return sorted(found)


def test_no_bare_builtin_exceptions() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    offences = sorted({o for f in files for o in _offences(f, PACKAGE.parent)})
    assert not offences, "raise a frazil.errors class instead:\n" + "\n".join(offences)


def test_the_check_sees_a_bare_raise(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(x):\n"
        "    if x:\n"
        "        raise ValueError('bad')\n"
        "    raise KeyError\n"
        "def g():\n"
        "    return FileNotFoundError('gone')\n"
        "def h():\n"
        "    raise NotImplementedError\n"
    )
    found = _offences(sample, tmp_path)
    assert sorted(o.rsplit(": ", 1)[1] for o in found) == [
        "FileNotFoundError",
        "KeyError",
        "ValueError",
    ]
