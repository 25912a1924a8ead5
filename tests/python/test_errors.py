"""The exception hierarchy: every error is a FrazilError, and a panic is one too."""

from __future__ import annotations

import subprocess
import sys

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
