"""Where data files go (issue 22: honoured or refused, never ignored): Java's object-storage
layout (``write.object-storage.enabled``, ``write.object-storage.partitioned-paths``, the
table context when ``write.data.path`` lies outside the table), and the refusal of
``write.location-provider.impl`` (a Java class), of Java's deprecated storage paths and of
``encryption.key-id``. Parity with Java's own ``LocationProviders`` is in
tests/interop/test_write_properties_parity.py."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from frazil import values
from frazil.catalog.sql import SqlCatalog
from frazil.errors import UnsupportedOperationError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import SetProperties
from frazil.types import NestedField, parse_type

SCHEMA = Schema(
    NestedField(1, "id", parse_type("long"), False),
    NestedField(2, "cat", parse_type("string"), False),
)
BY_CAT = PartitionSpec(PartitionField(2, 1000, "identity", "cat"))
HASH = re.compile(r"([01]{4})/([01]{4})/([01]{4})/([01]{8})")


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    c = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    c.create_namespace("db")
    return c


def _rows(ids: list[int], cat: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": [cat] * len(ids)})


def _files(table: object) -> list[str]:
    return sorted(t.file.file_path for t in table.scan().plan_files())  # type: ignore[attr-defined]


def _entropy(name: str) -> str:
    """The 20 low bits of the Murmur3 hash of ``name``, as four directories."""
    bits = format(values.hash("string", name) & 0xFFFFF, "020b")
    return f"{bits[:4]}/{bits[4:8]}/{bits[8:12]}/{bits[12:]}"


def test_object_storage_puts_a_hash_before_the_partition_path(catalog: SqlCatalog) -> None:
    table = catalog.create_table(
        "db.t", SCHEMA, partition_spec=BY_CAT, properties={"write.object-storage.enabled": "true"}
    )
    table.append(pa.concat_tables([_rows([1, 2], "a b/c"), _rows([3], "x")]))
    data = f"{table.location()}/data/"
    files = _files(table)
    assert len(files) == 2
    for path in files:
        assert path.startswith(data)
        rest = path[len(data) :]
        match = HASH.match(rest)
        assert match is not None, rest
        tail = rest[match.end() + 1 :]  # <partition path>/<file name>
        assert tail.startswith(("cat=a+b%2Fc/", "cat=x/"))
        assert match.group(0) == _entropy(tail)
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_without_partitioned_paths_the_hash_prefixes_the_file_name(catalog: SqlCatalog) -> None:
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=BY_CAT,
        properties={
            "write.object-storage.enabled": "true",
            "write.object-storage.partitioned-paths": "false",
        },
    )
    table.append(_rows([1], "a"))
    (path,) = _files(table)
    data = f"{table.location()}/data/"
    name = path.rsplit("/", 1)[1]
    match = re.fullmatch(r"[01]{4}/[01]{4}/[01]{4}/([01]{8})-(.+\.parquet)", path[len(data) :])
    assert match is not None, path
    assert path[len(data) :] == f"{_entropy(match.group(2))}-{match.group(2)}"
    assert name.startswith(match.group(1) + "-")
    assert "cat=" not in path
    assert table.scan(row_filter="cat = 'a'").to_arrow().num_rows == 1


def test_a_data_path_outside_the_table_gets_the_table_s_context(
    catalog: SqlCatalog, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        properties={"write.object-storage.enabled": "true", "write.data.path": f"{shared}/"},
    )
    table.append(_rows([1], "a"))
    (path,) = _files(table)
    rest = path[len(f"{shared}/") :]
    match = HASH.match(rest)
    assert match is not None, path
    # The table location's last two segments: its namespace and name directories.
    parent, name = table.location().rstrip("/").rsplit("/", 2)[1:]
    file_name = path.rsplit("/", 1)[1]
    assert rest[match.end() :] == f"/{parent}/{name}/{file_name}"
    assert match.group(0) == _entropy(file_name)  # unpartitioned: the file name alone


def test_default_layout_and_a_void_spec(catalog: SqlCatalog) -> None:
    # v1: a removed partition field stays as a void one.
    table = catalog.create_table("db.t", SCHEMA, partition_spec=BY_CAT, format_version=1)
    table.append(_rows([1], "a"))
    assert _files(table)[0].startswith(f"{table.location()}/data/cat=a/")
    # A spec of void fields only is unpartitioned: Java's writers use no partition path.
    with table.update_spec() as update:
        update.remove_field("cat")
    assert table.spec().is_unpartitioned() and table.spec().fields
    table.append(_rows([2], "b"))
    newest = [f for f in _files(table) if "cat=a" not in f]
    assert [f.rsplit("/", 1)[0] for f in newest] == [f"{table.location()}/data"]


@pytest.mark.parametrize("value", ["TRUE", "yes", "1"])
def test_object_storage_values_are_booleans(catalog: SqlCatalog, value: str) -> None:
    if value == "TRUE":
        table = catalog.create_table(
            "db.t", SCHEMA, properties={"write.object-storage.enabled": value}
        )
        table.append(_rows([1], "a"))
        assert HASH.match(_files(table)[0][len(f"{table.location()}/data/") :])
        return
    with pytest.raises(ValueError, match=r"write\.object-storage\.enabled"):
        catalog.create_table("db.t", SCHEMA, properties={"write.object-storage.enabled": value})


REFUSED = [
    ("write.location-provider.impl", "com.example.MyProvider", "Java LocationProvider class"),
    ("write.object-storage.path", "s3://b/objects", "set write.data.path"),
    ("write.folder-storage.path", "/elsewhere", "set write.data.path"),
    ("encryption.key-id", "key-1", "encrypted files"),
]


@pytest.mark.parametrize(("key", "value", "message"), REFUSED)
def test_what_frazil_cannot_honour_is_refused_at_creation_set_and_write(
    catalog: SqlCatalog, tmp_path: Path, key: str, value: str, message: str
) -> None:
    with pytest.raises(UnsupportedOperationError, match=message) as created:
        catalog.create_table("db.t", SCHEMA, properties={key: value})
    assert f"{key}={value!r}" in str(created.value)
    assert not catalog.table_exists("db.t")
    table = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(UnsupportedOperationError, match=message):
        with table.update_properties() as update:
            update.set(key, value)
    assert key not in catalog.load_table("db.t").properties
    catalog.commit_table(table, [], [SetProperties({key: value})])  # as Java would
    with pytest.raises(UnsupportedOperationError, match=message):
        catalog.load_table("db.t").append(_rows([1], "a"))
    assert not list((tmp_path / "wh").rglob("*.parquet"))


@pytest.mark.parametrize("key", ["write.object-storage.path", "write.folder-storage.path"])
def test_a_deprecated_path_beside_write_data_path_is_unused_as_in_java(
    catalog: SqlCatalog, tmp_path: Path, key: str
) -> None:
    # Java reads write.data.path first and never looks at the deprecated key then.
    target = tmp_path / "data-here"
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        properties={key: str(tmp_path / "not-here"), "write.data.path": str(target)},
    )
    table.append(_rows([1], "a"))
    assert _files(table)[0].startswith(f"{target}/")
