"""The exception hierarchy: every error is a FrazilError, and a panic is one too."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pytest
from frazil import _native, errors, transforms, values


def test_every_error_class_is_a_frazil_error() -> None:
    classes = [getattr(errors, name) for name in errors.__all__]
    assert classes, "frazil.errors exports its classes"
    for cls in classes:
        assert issubclass(cls, errors.FrazilError), cls


def test_builtin_flavours_let_generic_handlers_catch() -> None:
    with pytest.raises(ValueError):
        transforms.bucket(pa.array([1]), 0)
    with pytest.raises(TypeError):
        values.to_bytes("int", "1")
    with pytest.raises(errors.UnknownTypeError, match="integer"):
        values.to_bytes("integer", 1)


def test_a_panic_in_rust_becomes_internal_error() -> None:
    with pytest.raises(errors.InternalError, match="deliberate"):
        _native._panic_for_tests("deliberate")
    # The interpreter is still alive and the core still works afterwards.
    assert transforms.bucket(pa.array([34], pa.int64()), 2**31 - 1).to_pylist() == [2017239379]


def test_a_panic_does_not_abort_a_fresh_interpreter() -> None:
    code = (
        "from frazil import _native, errors\n"
        "try:\n"
        "    _native._panic_for_tests('boom')\n"
        "except errors.InternalError as e:\n"
        "    print('caught', e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "caught internal error: panic in frazil's Rust core: boom" in done.stdout


def _stray_exception_classes(package: ModuleType) -> list[str]:
    """Exception classes defined in ``package`` anywhere but its ``errors`` module (warning
    classes: its ``warnings`` module), and those of that module that it does not export. Every
    module is imported: a class defined at import time anywhere is found, whatever it is named
    or derives from."""
    found = []
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        try:
            module = importlib.import_module(info.name)
        except errors.MissingDependencyError:
            # An optional integration whose package is absent here (frazil.spark.datasource
            # needs pyspark 4's data source API); tests/spark4 imports it where it exists.
            continue
        for name, value in vars(module).items():
            if not (isinstance(value, type) and issubclass(value, BaseException)):
                continue
            if value.__module__ != info.name:
                continue  # imported here, defined elsewhere
            if name.startswith("_"):
                continue  # private control flow, caught where it is raised (_checked._Mismatch)
            kind = "warnings" if issubclass(value, Warning) else "errors"
            home = f"{package.__name__}.{kind}"
            exported = getattr(sys.modules.get(home), "__all__", ())
            if info.name != home or name not in exported:
                found.append(f"{info.name}.{name}")
    return sorted(found)


def test_every_exception_class_is_defined_and_exported_in_frazil_errors() -> None:
    import frazil

    stray = _stray_exception_classes(frazil)
    assert not stray, (
        "define exception classes in frazil/errors.py and list them in its __all__: "
        + ", ".join(stray)
    )


def test_the_check_finds_a_stray_exception_class(tmp_path: Path) -> None:
    package = tmp_path / "strayed"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "errors.py").write_text(
        "__all__ = ['Listed']\nclass Listed(Exception): ...\nclass Unlisted(Exception): ...\n"
    )
    (package / "reader.py").write_text(
        "from strayed.errors import Listed\nclass LocalError(Listed): ...\n"
        "class Odd(KeyError): ...\nclass NotAnError: ...\nclass LocalWarning(UserWarning): ...\n"
        "class _Internal(Exception): ...\n"
    )
    (package / "warnings.py").write_text(
        "__all__ = ['Noted']\nclass Noted(UserWarning): ...\nclass Unnoted(UserWarning): ...\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        found = _stray_exception_classes(importlib.import_module("strayed"))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == "strayed"]:
            del sys.modules[name]
    assert found == [
        "strayed.errors.Unlisted",
        "strayed.reader.LocalError",
        "strayed.reader.LocalWarning",
        "strayed.reader.Odd",
        "strayed.warnings.Unnoted",
    ]


def test_errors_of_writes_and_catalogs_are_importable_from_frazil_errors() -> None:
    from frazil.table.write import SchemaMismatchError as FromWrite

    assert FromWrite is errors.SchemaMismatchError
    assert issubclass(errors.SchemaMismatchError, errors.ValidationError)
    assert issubclass(errors.LostConnectionError, errors.FrazilIOError)
    assert issubclass(errors.LostConnectionError, ConnectionError)
    assert issubclass(errors.PurgeIncompleteError, errors.FrazilError)
