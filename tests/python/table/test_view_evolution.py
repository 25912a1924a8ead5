"""View evolution: create_view, ReplaceView and apply_view_updates."""

from __future__ import annotations

import dataclasses

import pytest
from frazil import Schema, ViewMetadata
from frazil.errors import CommitFailedError, InvalidUpdateError
from frazil.snapshots import Snapshot
from frazil.table import (
    AddSchema,
    AddSnapshot,
    AssignUUID,
    SetProperties,
    UpgradeFormatVersion,
    update_from_json,
)
from frazil.table.view_updates import (
    AddViewVersion,
    AssertViewUUID,
    ReplaceView,
    SetCurrentViewVersion,
    apply_view_updates,
)
from frazil.table.view_updates import create_view as create
from frazil.types import IntegerType, LongType, StringType, optional
from frazil.view import SQLViewRepresentation
from hypothesis import given, settings
from hypothesis import strategies as st

VIEW_UUID = "fa6506c3-7681-40c8-86dc-e36561f83385"
SCHEMA = Schema(optional(1, "id", LongType()), optional(2, "data", StringType()))


def new_view(**kwargs: object) -> ViewMetadata:
    return create(
        "s3://bucket/views/v",
        SCHEMA,
        {"spark": "SELECT id, data FROM t"},
        default_namespace=["db"],
        default_catalog="prod",
        view_uuid=VIEW_UUID,
        timestamp_ms=1_000,
        **kwargs,  # type: ignore[arg-type]
    )


def replace(
    view: ViewMetadata, sql: str, ts: int, schema: Schema = SCHEMA, **kw: object
) -> ViewMetadata:
    return ReplaceView(view, schema=schema, sql={"spark": sql}, timestamp_ms=ts, **kw).commit_to()  # type: ignore[arg-type]


def test_create_view() -> None:
    view = new_view(properties={"comment": "c"})
    assert view.view_uuid == VIEW_UUID and view.location == "s3://bucket/views/v"
    assert view.properties == {"comment": "c"}
    assert [s.schema_id for s in view.schemas] == [0]
    version = view.current_version()
    assert version.version_id == 1 and version.schema_id == 0 and version.timestamp_ms == 1_000
    assert version.representations == (SQLViewRepresentation("SELECT id, data FROM t", "spark"),)
    assert version.default_namespace == ("db",) and version.default_catalog == "prod"
    assert version.operation == "create"
    assert [(e.timestamp_ms, e.version_id) for e in view.version_log] == [(1_000, 1)]
    assert ViewMetadata.from_json(view.to_json()) == view


def test_create_view_with_aliases_and_docs() -> None:
    view = new_view(column_aliases=["key", "value"], column_docs=["the key", None])
    schema = view.schema()
    assert schema is not None
    assert [(f.field_id, f.name, f.doc) for f in schema.fields] == [
        (1, "key", "the key"),
        (2, "value", None),
    ]
    with pytest.raises(InvalidUpdateError, match="got 1 column aliases for a view schema of 2"):
        new_view(column_aliases=["k"])


def test_replace_view_adds_a_version() -> None:
    view = new_view()
    replaced = replace(view, "SELECT id FROM t", 2_000, Schema(optional(1, "id", LongType())))
    assert replaced.current_version_id == 2
    assert [s.schema_id for s in replaced.schemas] == [0, 1]
    version = replaced.current_version()
    assert version.schema_id == 1 and version.operation == "replace"
    # The default catalog and namespace carry over from the current version.
    assert version.default_namespace == ("db",) and version.default_catalog == "prod"
    assert [(e.timestamp_ms, e.version_id) for e in replaced.version_log] == [
        (1_000, 1),
        (2_000, 2),
    ]
    assert ViewMetadata.from_json(replaced.to_json()) == replaced


def test_replace_view_reuses_an_identical_schema() -> None:
    replaced = replace(new_view(), "SELECT * FROM t", 2_000, default_namespace=["other"])
    assert [s.schema_id for s in replaced.schemas] == [0]
    assert replaced.current_version().schema_id == 0
    assert replaced.current_version().default_namespace == ("other",)


def test_replace_with_an_existing_version_reuses_it() -> None:
    v2 = replace(new_view(), "SELECT 2", 2_000)
    v3 = replace(v2, "SELECT 3", 3_000)
    same = replace(v3, "SELECT 3", 4_000)
    assert same is v3
    back = replace(v3, "SELECT 2", 5_000)
    assert back.current_version_id == 2 and len(back.versions) == 3
    # Going back to an older version is logged at the time of the change.
    assert back.version_log[-1].timestamp_ms == 5_000 and back.version_log[-1].version_id == 2


def test_replace_may_not_drop_a_dialect() -> None:
    view = ReplaceView(
        new_view(), schema=SCHEMA, sql={"spark": "SELECT 1", "trino": "SELECT 1"}, timestamp_ms=2
    ).commit_to()
    with pytest.raises(InvalidUpdateError, match=r"lose the SQL dialects \['trino'\]"):
        replace(view, "SELECT 2", 3)
    allowed = apply_view_updates(view, [SetProperties({"replace.drop-dialect.allowed": "true"})])
    assert replace(allowed, "SELECT 2", 3).current_version_id == 3


def test_replace_needs_a_representation() -> None:
    with pytest.raises(InvalidUpdateError, match="at least one representation"):
        ReplaceView(new_view(), schema=SCHEMA)
    with pytest.raises(InvalidUpdateError, match="at least one SQL"):
        create("x", SCHEMA, {}, default_namespace=[])


def test_version_history_is_trimmed() -> None:
    view = apply_view_updates(new_view(), [SetProperties({"version.history.num-entries": "2"})])
    for i in range(2, 6):
        view = replace(view, f"SELECT {i}", i * 1_000)
    assert [v.version_id for v in view.versions] == [4, 5]
    # The log is cut before any version no longer kept.
    assert [e.version_id for e in view.version_log] == [4, 5]
    assert view.current_version_id == 5


def test_default_history_size_is_10() -> None:
    view = new_view()
    for i in range(2, 15):
        view = replace(view, f"SELECT {i}", i * 1_000)
    assert len(view.versions) == 10 and view.versions[-1].version_id == 14


def test_history_keeps_the_current_version() -> None:
    view = apply_view_updates(new_view(), [SetProperties({"version.history.num-entries": "1"})])
    for i in range(2, 5):
        view = replace(view, f"SELECT {i}", i * 1_000)
    rolled = apply_view_updates(view, [SetCurrentViewVersion(4)], timestamp_ms=9_000)
    assert rolled is not None and [v.version_id for v in rolled.versions] == [4]


@pytest.mark.parametrize("size", ["0", "-1", "x"])
def test_bad_history_size_is_refused(size: str) -> None:
    with pytest.raises(InvalidUpdateError, match=r"version\.history\.num-entries"):
        apply_view_updates(new_view(), [SetProperties({"version.history.num-entries": size})])


def test_view_update_errors() -> None:
    view = new_view()
    version = view.current_version()
    with pytest.raises(InvalidUpdateError, match="unknown schema 7"):
        apply_view_updates(view, [AddViewVersion(dataclasses.replace(version, schema_id=7))])
    with pytest.raises(InvalidUpdateError, match="no schema was added"):
        apply_view_updates(view, [AddViewVersion(dataclasses.replace(version, schema_id=-1))])
    with pytest.raises(InvalidUpdateError, match="no version was added"):
        apply_view_updates(view, [SetCurrentViewVersion(-1)])
    with pytest.raises(InvalidUpdateError, match="unknown version 9"):
        apply_view_updates(view, [SetCurrentViewVersion(9)])
    with pytest.raises(InvalidUpdateError, match="cannot reassign the view UUID"):
        apply_view_updates(view, [AssignUUID("00000000-0000-0000-0000-000000000000")])
    with pytest.raises(InvalidUpdateError, match="v2"):
        apply_view_updates(view, [UpgradeFormatVersion(2)])
    with pytest.raises(InvalidUpdateError, match="'add-snapshot' is not a view update"):
        apply_view_updates(view, [AddSnapshot(Snapshot(1, 1, None, 1, "m"))])
    with pytest.raises(InvalidUpdateError, match="needs a location"):
        apply_view_updates(None, [AddSchema(SCHEMA)])


def test_view_updates_json() -> None:
    version = new_view().current_version()
    for update in (AddViewVersion(version), SetCurrentViewVersion(-1)):
        node = update.to_json()
        assert update_from_json(node) == update
    assert SetCurrentViewVersion(3).to_json() == {
        "action": "set-current-view-version",
        "view-version-id": 3,
    }
    assert AddViewVersion(version).to_json()["view-version"]["version-id"] == 1


def test_assert_view_uuid() -> None:
    view = new_view()
    requirement = AssertViewUUID(VIEW_UUID.upper())
    requirement.validate(view)
    assert AssertViewUUID.from_json(requirement.to_json()) == requirement
    with pytest.raises(CommitFailedError, match="view UUID does not match"):
        AssertViewUUID("00000000-0000-0000-0000-000000000000").validate(view)
    other = create("x", SCHEMA, {"spark": "SELECT 1"}, default_namespace=[], timestamp_ms=1)
    with pytest.raises(CommitFailedError):
        ReplaceView(view, schema=SCHEMA, sql={"spark": "SELECT 9"}).commit_to(other)


def test_replace_with_a_wider_schema_adds_it() -> None:
    wider = Schema(*SCHEMA.fields, optional(3, "n", IntegerType()))
    view = replace(new_view(), "SELECT id, data, n FROM t", 2_000, wider)
    assert view.schema() == Schema(*wider.fields, schema_id=1)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 5),
    st.lists(st.tuples(st.integers(0, 4), st.booleans()), min_size=1, max_size=15),
)
def test_random_replaces_keep_versions_and_log_consistent(
    history: int, steps: list[tuple[int, bool]]
) -> None:
    view = apply_view_updates(
        new_view(), [SetProperties({"version.history.num-entries": str(history)})]
    )
    wide = Schema(*SCHEMA.fields, optional(3, "n", IntegerType()))
    for ts, (query, use_wide) in enumerate(steps, start=2):
        before = view
        view = replace(view, f"SELECT {query}", ts * 1_000, wide if use_wide else SCHEMA)
        ids = [v.version_id for v in view.versions]
        assert len(ids) == len(set(ids)) and len(ids) <= max(history, 1)
        assert view.current_version_id in ids
        assert max(ids) >= max(v.version_id for v in before.versions)
        assert view.current_version().sql_for("spark") == SQLViewRepresentation(
            f"SELECT {query}", "spark"
        )
        assert all(e.version_id in ids for e in view.version_log)
        assert view.version_log[-1].version_id == view.current_version_id
        assert len({s.schema_id for s in view.schemas}) == len(view.schemas) <= 2
        assert ViewMetadata.from_json(view.to_json()) == view
