"""The ``frazil`` command line over a catalog (the in-memory one, injected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.cli import main
from frazil.cli._ddl import parse_partition_spec, parse_schema
from frazil.errors import FrazilError
from frazil.types import ListType, MapType, StructType


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    return InMemoryCatalog(warehouse=str(tmp_path))


def run(catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    status = main(list(argv), catalog_factory=lambda name, props: catalog)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def test_ddl_schema_nested_and_quoted() -> None:
    schema = parse_schema(
        "id long not null, tags list<string not null>, attrs map<string, int>, "
        'loc struct<city: string, zip: int not null>, "my, col" decimal(10, 2)'
    )
    assert [f.name for f in schema.fields] == ["id", "tags", "attrs", "loc", "my, col"]
    assert schema.field("id").required
    tags = schema.field("tags").field_type
    assert isinstance(tags, ListType) and tags.element_required
    assert isinstance(schema.field("attrs").field_type, MapType)
    loc = schema.field("loc").field_type
    assert isinstance(loc, StructType) and loc.fields[1].required
    assert str(schema.field("my, col").field_type) == "decimal(10, 2)"
    assert len(schema.field_ids()) == len(set(schema.field_ids()))


def test_ddl_errors_name_the_problem() -> None:
    with pytest.raises(FrazilError, match="unbalanced"):
        parse_schema("a list<int")
    with pytest.raises(FrazilError):
        parse_schema("a notatype")
    with pytest.raises(FrazilError, match="width"):
        parse_partition_spec("bucket(id)", parse_schema("id long"))


def test_partition_names_follow_java_builder() -> None:
    schema = parse_schema("id long, name string, ts timestamptz, region string")
    spec = parse_partition_spec("day(ts), bucket(16, id), truncate(4, name), region", schema)
    assert [(f.name, f.transform) for f in spec.fields] == [
        ("ts_day", "day"),
        ("id_bucket", "bucket[16]"),
        ("name_trunc", "truncate[4]"),
        ("region", "identity"),
    ]


def test_namespace_and_table_commands(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    run(catalog, capsys, "namespace", "create", "db", "--property", "owner=me")
    assert json.loads(run(catalog, capsys, "--json", "ns", "list")) == [{"namespace": "db"}]
    props = json.loads(run(catalog, capsys, "--json", "ns", "properties", "db", "--set", "a=1"))
    assert props == {"owner": "me", "a": "1"}
    run(
        catalog,
        capsys,
        "table",
        "create",
        "db.events",
        "--schema",
        "id long not null, ts timestamptz, name string",
        "--partition-by",
        "day(ts)",
        "--format-version",
        "3",
        "--property",
        "k=v",
    )
    assert json.loads(run(catalog, capsys, "--json", "table", "list", "db")) == [
        {"table": "db.events"}
    ]
    info = json.loads(run(catalog, capsys, "--json", "table", "describe", "db.events"))
    assert info["format-version"] == 3 and info["properties"]["k"] == "v"
    schema = json.loads(run(catalog, capsys, "--json", "table", "schema", "db.events"))
    assert [f["name"] for f in schema["fields"]] == ["id", "ts", "name"]
    spec = json.loads(run(catalog, capsys, "--json", "table", "spec", "db.events"))
    assert spec["fields"][0]["transform"] == "day"
    props = json.loads(
        run(
            catalog,
            capsys,
            "--json",
            "table",
            "properties",
            "db.events",
            "--set",
            "x=1",
            "--remove",
            "k",
        )
    )
    assert props["x"] == "1" and "k" not in props
    assert catalog.load_table("db.events").properties["x"] == "1"
    assert json.loads(run(catalog, capsys, "--json", "table", "snapshots", "db.events")) == []
    scanned = run(catalog, capsys, "scan", "db.events", "--filter", "id < 5")
    assert "0 rows" in scanned
    run(catalog, capsys, "table", "rename", "db.events", "db.renamed")
    assert catalog.table_exists("db.renamed") and not catalog.table_exists("db.events")
    human = run(catalog, capsys, "table", "describe", "db.renamed")
    assert "format-version: 3" in human
    run(catalog, capsys, "table", "drop", "db.renamed")
    assert catalog.list_tables("db") == []


def test_errors_exit_1_with_the_message(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["table", "describe", "db.missing"], catalog_factory=lambda n, p: catalog)
    assert status == 1
    assert "db.missing" in capsys.readouterr().err
    catalog.create_namespace("db")
    status = main(
        ["table", "create", "db.t", "--schema", "id whatever"],
        catalog_factory=lambda n, p: catalog,
    )
    assert status == 1
    assert "whatever" in capsys.readouterr().err
