"""Random histories (appends and deletes on main and a branch, tags) expired with random
arguments: afterwards every file a remaining snapshot reaches exists, every snapshot still
reads, and every data file only expired snapshots reached is gone. The oracle reads each
snapshot's live files through the metadata tables (``inspect.files``), not through the
expiry's own reachability code."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from frazil.table._table import Table
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from maintenance_helpers import DAY_MS, commit, make_table, write_data_file

NOW = time.time_ns() // 1_000_000

# An operation: ("append", branch, partition) | ("delete", branch, pick) | ("tag", pick).
_append = st.tuples(st.just("append"), st.sampled_from(["main", "b"]), st.sampled_from("xyz"))
_delete = st.tuples(st.just("delete"), st.sampled_from(["main", "main", "b"]), st.integers(0, 50))
_tag = st.tuples(st.just("tag"), st.integers(0, 50))
operation = st.one_of(_append, _delete, _append, _delete, _tag)


def _live(table: Table, snapshot_id: int) -> set[str]:
    files = table.inspect.files(snapshot_id).column("file_path").to_pylist()
    return set(files)


def _apply(table: Table, operations: list[tuple[object, ...]]) -> None:
    day = 0
    for op in operations:
        day += 1
        when = NOW - (len(operations) - day + 1) * DAY_MS
        kind = op[0]
        if kind == "tag":
            if table.snapshots():
                target = table.snapshots()[int(op[1]) % len(table.snapshots())].snapshot_id  # type: ignore[call-overload]
                with table.manage_snapshots() as manage:
                    manage.create_tag(f"t{day}", target)
            continue
        branch = str(op[1])
        if branch == "b" and "b" not in table.refs():
            current = table.current_snapshot()
            if current is None:
                continue
            with table.manage_snapshots() as manage:
                manage.create_branch("b", current.snapshot_id)
        if kind == "append":
            # Two files per manifest, so that a delete rewrites a manifest whose other file
            # stays live.
            files = [write_data_file(table, [day], str(op[2])), write_data_file(table, [-day], "w")]
            commit(table, files, branch=branch, timestamp_ms=when)
        else:
            head = table.snapshot_by_name(branch)
            live = sorted(_live(table, head.snapshot_id)) if head else []
            if live:
                victim = live[int(op[2]) % len(live)]  # type: ignore[call-overload]
                commit(
                    table, removed=[victim], branch=branch, timestamp_ms=when, operation="delete"
                )


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    operations=st.lists(operation, min_size=2, max_size=7),
    older_than_days=st.integers(0, 3),
    retain_last=st.integers(1, 3),
)
def test_random_histories_keep_what_remains_and_drop_what_only_expired_reached(
    operations: list[tuple[object, ...]], older_than_days: int, retain_last: int
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        table = make_table(Path(directory))
        _apply(table, [("append", "main", "x"), *operations])
        before = {s.snapshot_id: _live(table, s.snapshot_id) for s in table.snapshots()}
        rows_before = {s: table.scan(snapshot_id=s).to_arrow().num_rows for s in before}
        result = table.expire_snapshots(
            older_than=NOW - older_than_days * DAY_MS, retain_last=retain_last
        )
        remaining = {s.snapshot_id for s in table.snapshots()}
        assert remaining | set(result.expired_snapshot_ids) == set(before)
        still_needed = set().union(*(before[s] for s in remaining)) if remaining else set()
        only_expired = set().union(*(before[s] for s in result.expired_snapshot_ids)) - still_needed
        assert all(Path(p).exists() for p in still_needed)
        assert not any(Path(p).exists() for p in only_expired)
        assert {p for p, k in result.files.items() if k == "data"} == only_expired
        event(
            f"expired {bool(result.expired_snapshot_ids)}, data files deleted {bool(only_expired)}"
        )
        for snapshot_id in remaining:
            assert (
                table.scan(snapshot_id=snapshot_id).to_arrow().num_rows == rows_before[snapshot_id]
            )
        # Every ref points at a remaining snapshot; main is never lost.
        assert all(ref.snapshot_id in remaining for ref in table.refs().values())
        if before:
            assert table.current_snapshot() is not None
