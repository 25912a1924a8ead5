"""Branches, tags and the current snapshot with ManageSnapshots."""

from __future__ import annotations

import pytest
from frazil import TableMetadata
from frazil.errors import CommitFailedError, InvalidMetadataError, InvalidUpdateError
from frazil.snapshots import Snapshot, SnapshotRef, SnapshotRefType
from frazil.table import (
    AddSnapshot,
    AssertRefSnapshotId,
    AssertTableUUID,
    ManageSnapshots,
    RemoveSnapshotRef,
    SetSnapshotRef,
    apply_updates,
)
from table_helpers import UUID


@pytest.fixture
def history(v2: TableMetadata) -> TableMetadata:
    """Snapshots 1 <- 2 <- 3 on main, and 4 (child of 1) off the main line."""
    updates = []
    for snapshot_id, parent in ((1, None), (2, 1), (3, 2)):
        snap = Snapshot(snapshot_id, 100 * snapshot_id, parent, snapshot_id, f"m{snapshot_id}")
        updates += [AddSnapshot(snap), SetSnapshotRef("main", snapshot_id)]
    updates.append(AddSnapshot(Snapshot(4, 400, 1, 4, "m4")))
    return apply_updates(v2, updates, timestamp_ms=1_000)


def test_branches_and_tags(history: TableMetadata) -> None:
    with ManageSnapshots(history) as refs:
        refs.create_tag("v1", 1)
        refs.create_branch("audit", max_ref_age_ms=10, min_snapshots_to_keep=2)
        refs.create_branch("side", 4)
    metadata = refs.metadata
    assert metadata.refs["v1"] == SnapshotRef.tag(1)
    assert metadata.refs["audit"] == SnapshotRef.branch(
        3, min_snapshots_to_keep=2, max_ref_age_ms=10
    )
    assert metadata.refs["side"].snapshot_id == 4 and metadata.current_snapshot_id == 3
    updates, requirements = refs.updates_and_requirements()
    assert updates[0] == SetSnapshotRef("v1", 1, SnapshotRefType.TAG)
    assert requirements == (
        AssertTableUUID(UUID),
        AssertRefSnapshotId("v1", None),
        AssertRefSnapshotId("audit", None),
        AssertRefSnapshotId("side", None),
    )
    with ManageSnapshots(metadata) as more:
        more.replace_branch("audit", 2).remove_tag("v1").remove_branch("side")
    after = more.metadata
    assert after.refs["audit"] == SnapshotRef.branch(2, min_snapshots_to_keep=2, max_ref_age_ms=10)
    assert set(after.refs) == {"main", "audit"}
    assert RemoveSnapshotRef("v1") in more.updates()


def test_rollback_and_set_current(history: TableMetadata) -> None:
    rolled = ManageSnapshots(history).rollback_to(1).commit_to(timestamp_ms=5_000)
    assert rolled.current_snapshot_id == 1
    assert (
        rolled.snapshot_log[-1].snapshot_id == 1 and rolled.snapshot_log[-1].timestamp_ms == 5_000
    )
    with pytest.raises(InvalidUpdateError, match="snapshot 4: it is not an ancestor"):
        ManageSnapshots(history).rollback_to(4)
    jumped = ManageSnapshots(history).set_current_snapshot(4).commit_to()
    assert jumped.current_snapshot_id == 4


def test_refusals(history: TableMetadata, v2: TableMetadata) -> None:
    refs = ManageSnapshots(history).create_tag("t", 1)
    with pytest.raises(InvalidUpdateError, match="the ref already exists"):
        refs.create_branch("t")
    with pytest.raises(InvalidUpdateError, match="unknown snapshot 9"):
        refs.create_tag("u", 9)
    with pytest.raises(InvalidUpdateError, match="cannot remove the main branch"):
        refs.remove_branch("main")
    with pytest.raises(InvalidUpdateError, match="'t' is a tag"):
        refs.remove_branch("t")
    with pytest.raises(InvalidUpdateError, match="'main' is a branch"):
        refs.remove_tag("main")
    with pytest.raises(InvalidUpdateError, match="tag 'nope' does not exist"):
        refs.remove_tag("nope")
    with pytest.raises(InvalidUpdateError, match="'t' is a tag"):
        refs.replace_branch("t", 2)
    with pytest.raises(InvalidUpdateError, match="no current snapshot"):
        ManageSnapshots(v2).create_branch("b")
    with pytest.raises(InvalidMetadataError, match="must be positive"):
        ManageSnapshots(history).create_branch("b", min_snapshots_to_keep=0)


def test_concurrent_ref_change_fails_the_commit(history: TableMetadata) -> None:
    mine = ManageSnapshots(history).rollback_to(2)
    theirs = ManageSnapshots(history).rollback_to(1).commit_to()
    with pytest.raises(CommitFailedError, match="branch 'main' has changed: expected snapshot 3"):
        mine.commit_to(theirs)


def test_no_change_means_no_updates(history: TableMetadata) -> None:
    refs = ManageSnapshots(history).create_tag("t", 1).remove_tag("t")
    assert refs.updates() == ()
    assert ManageSnapshots(history).set_current_snapshot(3).updates() == ()
