"""Expiring snapshots: the retention rules (spec: Snapshot Retention Policy, Java's
RemoveSnapshots) and the files deleted afterwards (exactly those no remaining snapshot
reaches)."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from frazil.errors import ValidationError
from frazil.snapshots import SnapshotRef
from frazil.statistics import PartitionStatisticsFile, StatisticsFile
from frazil.table._table import Table
from frazil.table.maintenance import FileKind
from frazil.table.maintenance.retention import plan_retention
from frazil.table.transaction import BuilderChange
from frazil.table.updates import SetPartitionStatistics, SetStatistics
from maintenance_helpers import DAY_MS, commit, files_under, make_table, rows_of, write_data_file

NOW = time.time_ns() // 1_000_000


def _history(tmp_path: Path, **properties: str) -> tuple[Table, list[int]]:
    """Five appends a day apart, 10 days ago to 6 days ago, then a delete 1 hour ago."""
    table = make_table(tmp_path, **properties)
    ids = []
    for day in range(5):
        data = write_data_file(table, [day * 10 + i for i in range(3)], f"c{day % 2}")
        ids.append(commit(table, [data], timestamp_ms=NOW - (10 - day) * DAY_MS))
    return table, ids


def test_defaults_expire_older_than_five_days_keeping_the_current(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    before = rows_of(table)
    result = table.expire_snapshots()
    # All five are older than five days: only the current one (min-snapshots-to-keep 1) stays.
    assert result.expired_snapshot_ids == tuple(sorted(ids[:-1]))
    assert [s.snapshot_id for s in table.snapshots()] == [ids[-1]]
    assert rows_of(table) == before
    # Nothing the current snapshot reaches was deleted: it still reads, and its files exist.
    assert result.deleted_data_files_count == 0
    assert result.deleted_manifest_lists_count == 4
    assert result.deleted_manifests_count == 0  # fast appends: each manifest is still listed
    for location in result.deleted_files:
        assert not Path(location).exists()
    reloaded = table.catalog.load_table(table.identifier)  # type: ignore[union-attr]
    assert [s.snapshot_id for s in reloaded.snapshots()] == [ids[-1]]


def test_retain_last_and_older_than(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    result = table.expire_snapshots(older_than=NOW, retain_last=3)
    assert result.expired_snapshot_ids == tuple(sorted(ids[:2]))
    # older_than as a datetime: ids[2] is 8 days old.
    result = (
        table.maintenance.expire_snapshots()
        .older_than(dt.datetime.fromtimestamp((NOW - 7 * DAY_MS) / 1000, tz=dt.timezone.utc))
        .commit()
    )
    assert result.expired_snapshot_ids == (ids[2],)
    assert [s.snapshot_id for s in table.snapshots()] == ids[3:]


def test_table_properties_set_the_defaults(tmp_path: Path) -> None:
    table, ids = _history(
        tmp_path,
        **{
            "history.expire.max-snapshot-age-ms": str(9 * DAY_MS - 60_000),
            "history.expire.min-snapshots-to-keep": "2",
        },
    )
    result = table.maintenance.expire_snapshots().commit()
    # Kept: the two newest (min 2) and anything younger than 9 days (ids[2..4]).
    assert result.expired_snapshot_ids == tuple(sorted(ids[:2]))


def test_files_removed_by_an_expired_overwrite_are_deleted_shared_ones_kept(
    tmp_path: Path,
) -> None:
    table = make_table(tmp_path)
    a = write_data_file(table, [1, 2], "x")
    b = write_data_file(table, [3], "y")
    c = write_data_file(table, [4], "x")
    s1 = commit(table, [a, b], timestamp_ms=NOW - 9 * DAY_MS)
    s2 = commit(table, [c], timestamp_ms=NOW - 8 * DAY_MS)
    s3 = commit(table, removed=[a["file_path"]], timestamp_ms=NOW - 7 * DAY_MS, operation="delete")
    before_files = files_under(table.location())
    dry = table.maintenance.expire_snapshots().older_than(NOW - 7 * DAY_MS).dry_run()
    assert dry.dry_run and dry.expired_snapshot_ids == tuple(sorted([s1, s2]))
    assert files_under(table.location()) == before_files  # a dry run deletes nothing
    assert len(table.snapshots()) == 3  # and commits nothing
    # ``a`` is live only in s1 and s2: it goes. ``b`` and ``c`` are still live in s3: kept.
    # (Java core's IncrementalFileCleanup, its default for a linear history, would keep ``a``
    # until s3 expires too; its ReachableFileCleanup and Spark's action delete it now.)
    assert dry.files[a["file_path"]] is FileKind.DATA
    assert b["file_path"] not in dry.files and c["file_path"] not in dry.files
    assert dry.deleted_data_files_count == 1
    # s1's manifest (holding a and b) was rewritten by s3, so only s1 and s2 had it.
    assert dry.deleted_manifests_count == 1
    assert dry.deleted_manifest_lists_count == 2

    result = table.maintenance.expire_snapshots().older_than(NOW - 7 * DAY_MS).commit()
    assert not result.dry_run
    assert result.files == dry.files
    assert [s.snapshot_id for s in table.snapshots()] == [s3]
    new_metadata = {table.metadata_location}
    assert files_under(table.location()) == before_files - set(dry.files) | new_metadata
    assert rows_of(table) == [(3, "y"), (4, "x")]


def test_branches_and_tags_keep_their_history(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    # A tag on the oldest snapshot and a branch with its own retention on ids[2].
    with table.manage_snapshots() as manage:
        manage.create_tag("v1", ids[0])
        manage.create_branch("audit", ids[2])
    audit_data = write_data_file(table, [99], "z")
    audit = commit(table, [audit_data], branch="audit", timestamp_ms=NOW - 3 * DAY_MS)
    result = table.expire_snapshots(older_than=NOW)
    # main keeps its head only; the tag keeps ids[0]; audit (min 1) keeps its head.
    kept = {s.snapshot_id for s in table.snapshots()}
    assert kept == {ids[0], ids[4], audit}
    assert set(result.expired_snapshot_ids) == {ids[1], ids[2], ids[3]}
    assert rows_of(table, ids[0]) == [(0, "c0"), (1, "c0"), (2, "c0")]
    assert (99, "z") in rows_of(table, audit)
    assert Path(audit_data["file_path"]).exists()


def test_ref_retention_settings_win_and_old_refs_are_removed(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    with table.manage_snapshots() as manage:
        manage.create_branch("keep3", ids[3])
        manage.create_tag("old", ids[0])
    metadata = table.metadata
    refs = dict(metadata.refs)
    refs["keep3"] = SnapshotRef.branch(ids[3], min_snapshots_to_keep=3)
    refs["old"] = SnapshotRef.tag(ids[0], max_ref_age_ms=DAY_MS)
    plan = plan_retention(metadata.replace(refs=refs), NOW, older_than_ms=NOW)
    # keep3 keeps ids[1..3]; the tag is older than its max age and goes, and ids[0] with it.
    assert plan.removed_refs == ("old",)
    assert plan.expired_snapshot_ids == (ids[0],)


def test_expiring_a_referenced_snapshot_by_id_is_refused(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    with table.manage_snapshots() as manage:
        manage.create_tag("t", ids[1])
    with pytest.raises(ValidationError, match=r"still referenced by refs \['t'\]"):
        table.maintenance.expire_snapshots().by_id(ids[1]).commit()
    with pytest.raises(ValidationError, match="main"):
        table.maintenance.expire_snapshots().by_id(ids[-1]).commit()
    assert len(table.snapshots()) == 5


def test_by_ids_expires_young_snapshots_too(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    ids = [
        commit(table, [write_data_file(table, [i], "x")], timestamp_ms=NOW - 1000 + i)
        for i in range(4)
    ]
    result = table.maintenance.expire_snapshots().by_ids([ids[1], ids[2]]).commit()
    assert result.expired_snapshot_ids == (ids[1], ids[2])
    assert [s.snapshot_id for s in table.snapshots()] == [ids[0], ids[3]]
    assert rows_of(table) == [(0, "x"), (1, "x"), (2, "x"), (3, "x")]


def test_delete_with_and_gc_disabled(tmp_path: Path) -> None:
    table, _ = _history(tmp_path)
    deleted: list[str] = []
    result = table.maintenance.expire_snapshots().delete_with(deleted.append).commit()
    assert sorted(deleted) == result.deleted_files and deleted
    assert all(Path(p).exists() for p in deleted)  # the callable decided, not the FileIO

    other, _ = _history(tmp_path / "other", **{"gc.enabled": "false"})
    with pytest.raises(ValidationError, match=r"gc\.enabled"):
        other.expire_snapshots()


def test_retain_last_must_be_positive(tmp_path: Path) -> None:
    table, _ = _history(tmp_path)
    with pytest.raises(ValidationError, match="at least 1"):
        table.maintenance.expire_snapshots().retain_last(0)


def test_expiry_plans_on_the_latest_metadata(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    stale = table.catalog.load_table(table.identifier)  # type: ignore[union-attr]
    newer = commit(table, [write_data_file(table, [7], "q")], timestamp_ms=NOW)
    # ``stale`` refreshes before planning, so the new head is kept and nothing it reaches goes.
    result = stale.expire_snapshots(older_than=NOW)
    assert set(result.expired_snapshot_ids) == set(ids)
    assert [s.snapshot_id for s in stale.snapshots()] == [newer]
    assert len(rows_of(stale)) == 16


def test_expiry_recomputes_after_a_lost_race(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, ids = _history(tmp_path)
    catalog = table.catalog
    assert catalog is not None
    other = catalog.load_table(table.identifier)
    real_commit = catalog.commit_table
    raced: list[int] = []

    def commit_after_another_writer(*args: object, **kwargs: object) -> object:
        if not raced:
            raced.append(0)
            monkeypatch.setattr(catalog, "commit_table", real_commit)
            # Another writer lands first: it rolls main back to ids[3], which the first plan
            # expires; applying that plan anyway would leave the table without main.
            with other.manage_snapshots() as manage:
                manage.rollback_to(ids[3])
        return real_commit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog, "commit_table", commit_after_another_writer)
    result = table.expire_snapshots(older_than=NOW)
    # The retry planned on the new metadata: main's new head stays, and what only it reaches.
    assert table.metadata.current_snapshot_id == ids[3]
    assert [s.snapshot_id for s in table.snapshots()] == [ids[3]]
    assert set(result.expired_snapshot_ids) == {ids[0], ids[1], ids[2], ids[4]}
    assert rows_of(table) == sorted(
        (day * 10 + i, f"c{day % 2}") for day in range(4) for i in range(3)
    )
    assert result.deleted_data_files_count == 1  # ids[4]'s file, reachable from nothing now


def test_statistics_files_of_expired_snapshots_are_deleted(tmp_path: Path) -> None:
    table, ids = _history(tmp_path)
    updates = []
    paths = {}
    for snapshot_id, kind in ((ids[0], "stats"), (ids[1], "partition-stats"), (ids[4], "stats")):
        path = Path(table.location(), "metadata", f"{snapshot_id}-{kind}.puffin")
        path.write_bytes(b"PFA1")
        paths[(snapshot_id, kind)] = str(path)
        if kind == "stats":
            updates.append(SetStatistics(StatisticsFile(snapshot_id, str(path), 4, 0)))
        else:
            updates.append(
                SetPartitionStatistics(PartitionStatisticsFile(snapshot_id, str(path), 4))
            )
    with table.transaction() as txn:
        txn.add_change(BuilderChange(tuple(updates), ()))
    result = table.expire_snapshots(older_than=NOW)
    assert result.deleted_statistics_files_count == 2
    assert not Path(paths[(ids[0], "stats")]).exists()
    assert not Path(paths[(ids[1], "partition-stats")]).exists()
    # The current snapshot's statistics stay, and stay in the metadata.
    assert Path(paths[(ids[4], "stats")]).exists()
    assert [s.snapshot_id for s in table.metadata.statistics] == [ids[4]]
