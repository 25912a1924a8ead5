"""Removing orphan files: only files nothing references and older than the cutoff go; a live
file is kept whatever spelling of its location the metadata uses."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from frazil import _native
from frazil.errors import InvalidValueError, ValidationError
from frazil.io import FileIO
from frazil.table._table import Table
from frazil.table.maintenance._locations import LocationSet
from frazil.table.maintenance.orphans import is_temp_file
from hypothesis import given
from hypothesis import strategies as st
from maintenance_helpers import DAY_MS, commit, files_under, make_table, rows_of, write_data_file

NOW = time.time_ns() // 1_000_000


def _age(path: Path | str, days: float = 4) -> None:
    old = time.time() - days * 86_400
    os.utime(path, (old, old))


def _table(tmp_path: Path) -> Table:
    table = make_table(tmp_path)
    a = write_data_file(table, [1, 2], "x")
    b = write_data_file(table, [3], "y")
    commit(table, [a], timestamp_ms=NOW - 3000)
    commit(table, [b], timestamp_ms=NOW - 2000)
    commit(table, removed=[a["file_path"]], timestamp_ms=NOW - 1000, operation="delete")
    for path in files_under(table.location()):
        _age(path)
    return table


def _stray(table: Table, relative: str, days: float = 4) -> str:
    path = Path(table.location(), relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"stray")
    _age(path, days)
    return str(path)


def test_only_unreferenced_old_files_go(tmp_path: Path) -> None:
    table = _table(tmp_path)
    live_before = files_under(table.location())
    old = _stray(table, "data/cat=x/00000-orphan.parquet")
    old_metadata = _stray(table, "metadata/snap-123-1-orphan.avro")
    recent = _stray(table, "data/cat=x/in-progress.parquet", days=1)
    hidden = _stray(table, "data/_temporary/0/part.parquet")
    checksum = _stray(table, "data/cat=x/.00000-orphan.parquet.crc")

    dry = table.remove_orphan_files(dry_run=True)
    assert dry == sorted([old, old_metadata])
    assert Path(old).exists()

    removed = table.remove_orphan_files()
    assert removed == dry
    assert not Path(old).exists() and not Path(old_metadata).exists()
    # In progress (younger than 3 days), hidden, and every live file stay.
    assert Path(recent).exists() and Path(hidden).exists() and Path(checksum).exists()
    assert live_before <= files_under(table.location())
    assert rows_of(table) == [(3, "y")]
    # ``a`` was deleted from the table but is live in older snapshots: it stays too.
    assert len(table.snapshots()) == 3


def test_older_than_decides_and_a_future_cutoff_takes_recent_orphans(tmp_path: Path) -> None:
    table = _table(tmp_path)
    recent = _stray(table, "data/cat=y/recent.parquet", days=0.5)
    assert table.remove_orphan_files(older_than=NOW - DAY_MS, dry_run=True) == []
    assert table.remove_orphan_files(older_than=NOW + DAY_MS, dry_run=True) == [recent]


def test_an_unreferenced_data_file_of_an_expired_snapshot_is_an_orphan(tmp_path: Path) -> None:
    table = _table(tmp_path)
    # Expire without deleting files: what only the expired snapshots reached is now orphaned.
    table.maintenance.expire_snapshots().older_than(NOW).clean_expired_files(False).commit()
    orphans = table.remove_orphan_files(older_than=NOW + DAY_MS, dry_run=True)
    names = {Path(p).name for p in orphans}
    assert any(n.endswith(".parquet") for n in names)  # ``a``
    assert sum(n.startswith("snap-") for n in names) == 2  # the two expired manifest lists
    assert rows_of(table) == [(3, "y")]


@pytest.mark.parametrize(
    "spelling",
    [
        lambda p: "file://" + p,
        lambda p: "file:" + p,
        lambda p: p.replace("/data/", "//data/"),
        lambda p: quote(p),  # URL-encoded (a partition value with a space: ``cat=a%20b``)
    ],
)
def test_live_files_are_kept_under_any_spelling(tmp_path: Path, spelling: object) -> None:
    table = make_table(tmp_path)
    data = write_data_file(table, [1], "a b")
    plain = data["file_path"]
    data["file_path"] = spelling(plain)  # type: ignore[operator]
    commit(table, [data], timestamp_ms=NOW)
    for path in files_under(table.location()):
        _age(path)
    assert table.remove_orphan_files(dry_run=True) == []
    assert table.remove_orphan_files() == []
    assert Path(plain).exists()


def test_object_store_schemes_compare_equal() -> None:
    live = LocationSet(["s3://bucket/t/data/a=1/f.parquet", "s3a://bucket/t/data/x%3Dy/g"])
    assert "s3a://bucket/t/data/a=1/f.parquet" in live
    assert "s3n://bucket/t/data/a=1/f.parquet/" in live
    assert "s3://bucket/t/data/x=y/g" in live
    assert "s3://other/t/data/a=1/f.parquet" not in live
    assert live.has_path("s3://other/t/data/a=1/f.parquet")
    assert "gs://bucket/t/data/a=1/f.parquet" not in live


def _reference_keys(location: str) -> set[tuple[str, str, str, str]]:
    """The comparison forms spelled out the slow way: every form, always."""
    kind, bucket, account, path = _native.parse_location(location)
    forms = {re.sub("/{2,}", "/", p).strip("/") for p in (path, unquote(path))}
    return {(kind, bucket or "", account or "", form) for form in forms}


_SEGMENT = st.text(alphabet="ab=%3D2F/ ", min_size=0, max_size=6)


@given(
    st.lists(
        st.tuples(st.sampled_from(["", "s3://b/", "s3a://b/", "file:///"]), _SEGMENT), max_size=4
    ),
    st.sampled_from(["", "s3://b/", "s3n://b/", "file:///", "gs://b/"]),
    _SEGMENT,
)
def test_location_set_membership_is_the_intersection_of_forms(
    members: list[tuple[str, str]], scheme: str, path: str
) -> None:
    locations = [f"{prefix}t/{p}" for prefix, p in members]
    query = f"{scheme}t/{path}"
    try:
        query_keys = _reference_keys(query)
        member_keys = [_reference_keys(m) for m in locations]
        expected = any(query_keys & keys for keys in member_keys)
    except InvalidValueError:
        # A local path whose %-escapes decode to non-UTF-8 (e.g. "%D2") is bad input: the set
        # refuses it too (when built, or when asked), rather than guessing.
        with pytest.raises(InvalidValueError, match="non-UTF-8"):
            _ = query in LocationSet(locations)
        return
    live = LocationSet(locations)
    assert (query in live) is expected
    for location in locations:  # every member, as spelled, is in the set (the fast path)
        assert location in live


def test_modification_times_come_from_the_listing(tmp_path: Path) -> None:
    io = FileIO()
    path = tmp_path / "f"
    io.write(str(path), b"1")
    _age(path, days=2)
    [info] = io.list(str(tmp_path))
    assert info.last_modified_ms == path.stat().st_mtime_ns // 1_000_000
    assert abs(info.last_modified_ms - (time.time() * 1000 - 2 * DAY_MS)) < 60_000
    [uri_info] = io.list("file://" + str(tmp_path))
    assert uri_info.last_modified_ms == info.last_modified_ms


def test_prefix_mismatch_mode_is_checked(tmp_path: Path) -> None:
    table = _table(tmp_path)
    with pytest.raises(ValidationError, match="prefix_mismatch_mode"):
        table.maintenance.remove_orphan_files(prefix_mismatch_mode="maybe")  # type: ignore[arg-type]


# A child that writes big files through frazil's FileIO, over and over, until it is killed.
_WRITER = """
import sys
from frazil.io import FileIO

io, data = FileIO(), b"x" * (48 << 20)
while True:
    for target in sys.argv[1:]:
        io.write(target, data)
"""


def _temporaries(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))


def test_a_killed_writers_temporary_file_goes_once_old(tmp_path: Path) -> None:
    table = _table(tmp_path)
    metadata = Path(table.location(), "metadata")
    targets = ["snap-77-1-killed.avro", "v33.metadata.json", "version-hint.text"]
    left: list[str] = []
    for _ in range(10):  # killed between writing and renaming, almost always the first time
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, *(str(metadata / t) for t in targets)]
        )
        deadline = time.monotonic() + 60
        while not _temporaries(metadata) and time.monotonic() < deadline:
            time.sleep(0.001)
        child.send_signal(signal.SIGKILL)
        child.wait()
        left = _temporaries(metadata)
        if left:
            break
    assert len(left) == 1, left
    name = left[0]
    pattern = "|".join(re.escape(t) for t in targets)
    assert re.fullmatch(rf"\.({pattern})\.{child.pid}-\d+\.tmp", name), name
    assert is_temp_file(name)
    temporary = str(metadata / name)
    for target in targets:  # what the killed writer completed: orphans too, young ones
        if (metadata / target).exists():
            _age(metadata / target)
    # Young, as a file another writer is writing now: kept.
    assert temporary not in table.remove_orphan_files(dry_run=True)
    _age(temporary)
    assert temporary in table.remove_orphan_files()
    assert not Path(temporary).exists()


def test_frazils_old_temporary_files_go_and_other_hidden_files_stay(tmp_path: Path) -> None:
    table = _table(tmp_path)
    old = [
        _stray(table, "metadata/.snap-1-1-a1b2.avro.4242-0.tmp"),
        _stray(table, "metadata/.v33.metadata.json.4242-1.tmp"),
        _stray(table, "metadata/.version-hint.text.4242-2.tmp"),
        _stray(table, "metadata/.00034-9f1c.metadata.json.17-12345.tmp"),
        _stray(table, "data/cat=x/.00000-1-abc.parquet.99-3.tmp"),
    ]
    young = _stray(table, "metadata/.v34.metadata.json.4243-0.tmp", days=1)
    others = [
        _stray(table, "metadata/.v33.metadata.json.crc"),
        _stray(table, "metadata/.scratch.tmp"),
        _stray(table, "metadata/.v33.metadata.json.4242.tmp"),
        _stray(table, "metadata/.v33.metadata.json.4242-x.tmp"),
        _stray(table, "metadata/.v33.metadata.json.4242-0.tmp.bak"),
        _stray(table, "data/_temporary/.part.parquet.5-0.tmp"),  # in a hidden directory
    ]
    removed = table.remove_orphan_files()
    assert removed == sorted(old)
    assert not any(Path(p).exists() for p in old)
    assert Path(young).exists() and all(Path(p).exists() for p in others)
    assert rows_of(table) == [(3, "y")]


@given(
    name=st.text(st.characters(blacklist_characters="/\0"), min_size=1, max_size=30),
    pid=st.integers(1, 2**22),
    n=st.integers(0, 2**64 - 1),
)
def test_the_temporary_name_pattern(name: str, pid: int, n: int) -> None:
    # The name write_temp (src/io/local.rs) gives, and only that, is frazil's.
    assert is_temp_file(f".{name}.{pid}-{n}.tmp")
    if not name.startswith("."):
        assert not is_temp_file(f"{name}.{pid}-{n}.tmp")
    assert not is_temp_file(f".{name}.{pid}.tmp")
    assert not is_temp_file(f".{name}.{pid}-{n}.tmp~")
