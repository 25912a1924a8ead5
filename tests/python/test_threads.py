"""frazil._threads: one owner of how many threads frazil's pools use."""

from __future__ import annotations

import pyarrow as pa
import pytest


def test_frazil_threads_overrides_task_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    from frazil import _threads

    monkeypatch.setenv(_threads.ENVIRONMENT_VARIABLE, "3")
    assert _threads.threads() == 3
    _threads.set_threads(2)
    try:
        assert _threads.threads() == 2 and pa.cpu_count() == 2
    finally:
        _threads.set_threads(None)
    monkeypatch.setenv(_threads.ENVIRONMENT_VARIABLE, "zero")
    with pytest.raises(ValueError, match="FRAZIL_THREADS"):
        _threads.threads()
