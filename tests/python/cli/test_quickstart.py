"""``frazil quickstart`` on the embedded default catalog, run twice in a fresh directory."""

from __future__ import annotations

import os
from pathlib import Path

import frazil
import pytest
from frazil.cli import main
from frazil.cli.quickstart import generate_events


@pytest.fixture
def fresh_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with no frazil configuration anywhere."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("FRAZIL_CONFIG", raising=False)
    for key in list(os.environ):
        if key.startswith("FRAZIL_CATALOG__"):
            monkeypatch.delenv(key)
    return tmp_path


def test_generated_events_are_deterministic_and_in_january() -> None:
    first, again = generate_events(5_000, 10, seed=3), generate_events(5_000, 10, seed=3)
    assert first.equals(again)
    assert first["event_id"].to_pylist()[:2] == [10, 11]
    days = {t.day for t in first["ts"].to_pylist()}
    assert min(days) >= 1 and max(days) <= 30 and len(days) == 30
    assert first.column("country").null_count == 0


def test_quickstart_runs_twice(fresh_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):
        assert main(["quickstart", "--rows", "30000"]) == 0
        out = capsys.readouterr().out
        assert "pruned" in out and "time travel" in out and "total" in out
    catalog = frazil.load_catalog("default")
    assert Path(catalog.properties["warehouse"]) == fresh_dir / "frazil-warehouse"
    table = catalog.load_table("quickstart.events")
    rows = table.scan().to_arrow()
    assert rows.num_rows > 0
    assert "NZ" not in set(rows["country"].to_pylist())
    assert min(t.day for t in rows["ts"].to_pylist()) >= 2
    assert len(table.snapshots()) == 2
    assert table.schema().find_field("loyalty_tier") is not None
