"""View metadata: Java's final format and the spec draft's Appendix A example."""

from __future__ import annotations

import json
from typing import Any

import pytest
from frazil import Schema, SQLViewRepresentation, ViewHistoryEntry, ViewMetadata, ViewVersion
from frazil.errors import InvalidMetadataError, UnsupportedFormatVersionError
from frazil.types import LongType, required
from frazil.view import UnknownViewRepresentation
from metadata_files import load


def test_java_view_is_written_back_unchanged() -> None:
    node = load("view-java.metadata.json")
    view = ViewMetadata.from_json(json.dumps(node))
    assert view.to_dict() == node
    assert ViewMetadata.from_json(view.to_json()) == view


def test_java_view_model() -> None:
    view = ViewMetadata.from_json(load("view-java.metadata.json"))
    assert view.view_uuid == "fa6506c3-7681-40c8-86dc-e36561f83385"
    current = view.current_version()
    assert current.version_id == 2 and current.schema_id == 1
    assert current.operation == "replace"
    assert current.default_catalog == "some-catalog"
    assert current.default_namespace == ("a", "b")
    trino = current.sql_for("TRINO")
    assert trino is not None and trino.sql == 'select * from "ns"."tbl"'
    assert view.schema() == view.schema_by_id(1)
    assert view.version_log[0] == ViewHistoryEntry(4353, 1)
    assert view.properties == {"some-key": "some-value"}


@pytest.mark.parametrize(
    "name", ["view-spec-appendix-a-create.metadata.json", "view-spec-appendix-a.metadata.json"]
)
def test_spec_draft_example_round_trips(name: str) -> None:
    # The view spec's Appendix A example (an early draft: no view-uuid, schema-id and
    # namespace in the representation, parent-version-id, current-schema-id).
    node = load(name)
    view = ViewMetadata.from_json(node)
    assert view.to_dict() == node
    assert ViewMetadata.from_json(view.to_json()) == view
    assert view.view_uuid is None
    current = view.current_version()
    assert current.schema_id is None
    assert current.effective_schema_id == node["current-schema-id"]
    assert view.schema() is not None
    assert view.schema().schema_id == node["current-schema-id"]  # type: ignore[union-attr]
    assert current.extras["parent-version-id"] == node["versions"][-1]["parent-version-id"]
    sql = current.representations[0]
    assert isinstance(sql, SQLViewRepresentation)
    assert sql.extras["default-namespace"] == ["anorwood"]


def test_new_view_is_written_as_java_writes_it() -> None:
    view = ViewMetadata(
        view_uuid="fa6506c3-7681-40c8-86dc-e36561f83385",
        location="s3://b/v",
        current_version_id=1,
        versions=(
            ViewVersion(
                version_id=1,
                timestamp_ms=10,
                schema_id=0,
                summary={"operation": "create"},
                representations=(SQLViewRepresentation("select 1 as x", "spark"),),
            ),
        ),
        version_log=(ViewHistoryEntry(10, 1),),
        schemas=(Schema(required(1, "x", LongType())),),
    )
    assert view.to_dict() == {
        "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
        "format-version": 1,
        "location": "s3://b/v",
        "schemas": [Schema(required(1, "x", LongType())).to_json()],
        "current-version-id": 1,
        "versions": [
            {
                "version-id": 1,
                "timestamp-ms": 10,
                "schema-id": 0,
                "summary": {"operation": "create"},
                "default-namespace": [],
                "representations": [{"type": "sql", "sql": "select 1 as x", "dialect": "spark"}],
            }
        ],
        "version-log": [{"timestamp-ms": 10, "version-id": 1}],
    }


def java_view() -> dict[str, Any]:
    return load("view-java.metadata.json")


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (
            lambda d: d.update({"format-version": 2}),
            UnsupportedFormatVersionError,
            "view format version 2",
        ),
        (
            lambda d: d.update({"current-version-id": 3}),
            InvalidMetadataError,
            "current-version-id 3 is not among",
        ),
        (
            lambda d: d["versions"].append(d["versions"][0]),
            InvalidMetadataError,
            "duplicate view version id 1",
        ),
        (
            lambda d: d["versions"][0].update({"schema-id": 5}),
            InvalidMetadataError,
            "uses schema 5",
        ),
        (
            lambda d: d["schemas"].append(d["schemas"][0]),
            InvalidMetadataError,
            "duplicate view schema id 0",
        ),
        (
            lambda d: d["versions"][1]["representations"].append(
                {"type": "sql", "sql": "select 2", "dialect": "Spark-SQL"}
            ),
            InvalidMetadataError,
            "more than one SQL representation",
        ),
        (
            lambda d: d["versions"][1]["representations"][0].pop("dialect"),
            InvalidMetadataError,
            "missing required field 'dialect'",
        ),
        (lambda d: d.pop("versions"), InvalidMetadataError, "missing required field 'versions'"),
        (lambda d: d.pop("location"), InvalidMetadataError, "missing required field 'location'"),
    ],
)
def test_invalid_views_are_refused(change: Any, error: type[Exception], message: str) -> None:
    node = java_view()
    change(node)
    with pytest.raises(error, match=message):
        ViewMetadata.from_json(node)


def test_unknown_representations_are_kept() -> None:
    node = java_view()
    node["versions"][1]["representations"].append({"type": "substrait", "plan": "AAEC"})
    view = ViewMetadata.from_json(node)
    assert view.current_version().representations[-1] == UnknownViewRepresentation(
        "substrait", {"plan": "AAEC"}
    )
    assert view.to_dict() == node
