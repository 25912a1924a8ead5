"""Arrow types a pyiceberg user writes (issue 22): pyarrow's canonical ``pa.uuid()``,
nanosecond timestamps (pyiceberg's ``downcast-ns-timestamp-to-us-on-write``, and
``timestamp_ns`` columns on v3), and ``union_by_name`` with a pyarrow schema."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import InvalidSchemaError, InvalidUpdateError, InvalidValueError
from frazil.io import FileIO
from frazil.table.create import new_table_metadata
from frazil.table.write import SchemaMismatchError, write_data_files
from frazil.types import (
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    UUIDType,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# The setting's names, as the README documents them.
DOWNCAST_NS = "downcast-ns-timestamp-to-us-on-write"
DOWNCAST_NS_ENV = "FRAZIL_DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE"

UUIDS = [
    uuid.UUID("ffffffff-0000-0000-0000-000000000001"),  # high bit set: sorts last unsigned
    uuid.UUID("00000000-0000-0000-0000-000000000002"),
    uuid.UUID("7fffffff-ffff-ffff-ffff-ffffffffffff"),
    uuid.UUID("80000000-0000-0000-0000-000000000000"),  # the first negative one when signed
]


@pytest.fixture(autouse=True)
def _no_downcast_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DOWNCAST_NS_ENV, raising=False)


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    c = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    c.create_namespace("db")
    return c


def _files(table: Any) -> list[Any]:
    return [task.file for task in table.scan(options={"include-column-stats": "true"}).plan_files()]


def _written(tmp_path: Path, metadata: Any, data: pa.Table, **props: str) -> Any:
    (data_file,) = write_data_files(metadata, FileIO(), data, properties=props or None)
    return data_file


def _long(raw: bytes) -> int:
    value: int = struct.unpack("<q", raw)[0]
    return value


# --- uuid ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("arrow_type", [pa.uuid(), pa.binary(16)], ids=["pa.uuid", "fixed16"])
def test_uuid_columns_take_pa_uuid_and_fixed16(catalog: SqlCatalog, arrow_type: Any) -> None:
    data = pa.table({"u": pa.array([u.bytes for u in UUIDS] + [None], arrow_type)})
    # An Arrow schema with pa.uuid() gives a uuid column (fixed_size_binary(16) a fixed[16]).
    table = catalog.create_table("db.u", pa.schema([("u", pa.uuid())]))
    assert table.schema().find_type("u") == UUIDType()
    table.append(data)
    read = table.scan().to_arrow().column("u")
    storage = read.combine_chunks()
    if isinstance(storage.type, pa.BaseExtensionType):
        storage = storage.storage
    assert storage.to_pylist() == [u.bytes for u in UUIDS] + [None]
    (file,) = _files(table)
    # Bounds compare as unsigned bytes (big-endian), the spec's order for uuid.
    assert file.lower_bounds[1] == UUIDS[1].bytes
    assert file.upper_bounds[1] == UUIDS[0].bytes
    assert file.null_value_counts[1] == 1 and file.value_counts[1] == 5


def test_pa_uuid_inside_structs_and_lists(tmp_path: Path) -> None:
    metadata = new_table_metadata(
        pa.schema(
            [
                ("s", pa.struct([("u", pa.uuid())])),
                ("l", pa.list_(pa.uuid())),
            ]
        ),
        str(tmp_path / "t"),
    )

    def uuids(*values: uuid.UUID) -> pa.Array:
        storage = pa.array([u.bytes for u in values], pa.binary(16))
        return pa.ExtensionArray.from_storage(pa.uuid(), storage)

    data = pa.table(
        {
            "s": pa.StructArray.from_arrays([uuids(UUIDS[0])], names=["u"]),
            "l": pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), uuids(*UUIDS[1:3])),
        }
    )
    assert data.schema.field("l").type.value_type == pa.uuid()
    data_file = _written(tmp_path, metadata, data)
    back = pq.read_table(str(data_file.file_path))
    assert back.column("s").to_pylist() == [{"u": UUIDS[0].bytes}]
    assert back.column("l").to_pylist() == [[UUIDS[1].bytes, UUIDS[2].bytes]]


def test_uuid_of_the_wrong_width_is_refused(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.u", pa.schema([("u", pa.uuid())]))
    with pytest.raises(SchemaMismatchError, match=r"fixed_size_binary\[8\] cannot be written"):
        table.append(pa.table({"u": pa.array([b"12345678"], pa.binary(8))}))


# --- nanosecond timestamps -----------------------------------------------------------------------

NS = [
    1_700_000_000_123_456_789,  # 2023-11-14T22:13:20.123456789
    -1_500,  # 1969-12-31T23:59:59.9999985: floors to -2 us
    999,
    -9_223_372_036_854_775_807,  # near the end of the range: no overflow
]


def _ns_table(zone: str | None = None) -> pa.Table:
    return pa.table({"ts": pa.array([*NS, None], pa.timestamp("ns", zone))})


def _floor_us(nanos: int) -> int:
    return nanos // 1000


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_ns_into_a_microsecond_column_names_both_ways_out(
    catalog: SqlCatalog, zone: str | None
) -> None:
    table = catalog.create_table("db.t", pa.schema([("ts", pa.timestamp("us", zone))]))
    with pytest.raises(SchemaMismatchError) as info:
        table.append(_ns_table(zone))
    message = str(info.value)
    assert f"{DOWNCAST_NS}=true" in message and DOWNCAST_NS_ENV in message
    assert "format version 3" in message and "_ns column" in message


@pytest.mark.parametrize("zone", [None, "UTC"])
@pytest.mark.parametrize("how", ["property", "environment"])
def test_downcast_truncates_to_microseconds_with_matching_bounds(
    catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch, zone: str | None, how: str
) -> None:
    properties = {DOWNCAST_NS: "true"} if how == "property" else {}
    if how == "environment":
        monkeypatch.setenv(DOWNCAST_NS_ENV, "True")
    table = catalog.create_table(
        "db.t", pa.schema([("ts", pa.timestamp("us", zone))]), properties=properties
    )
    table.append(_ns_table(zone))
    read = table.scan().to_arrow().column("ts").combine_chunks()
    assert read.type == pa.timestamp("us", zone and "UTC")
    expected = [_floor_us(n) for n in NS]
    assert read.cast(pa.int64()).to_pylist() == [*expected, None]
    (file,) = _files(table)
    assert _long(file.lower_bounds[1]) == min(expected)
    assert _long(file.upper_bounds[1]) == max(expected)
    assert file.null_value_counts[1] == 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1), min_size=1))
def test_downcast_floors_every_value(nanos: list[int]) -> None:
    from frazil.table.write._schema import _floor_to_micros

    array = pa.array(nanos, pa.timestamp("ns"))
    assert _floor_to_micros(array).cast(pa.int64()).to_pylist() == [n // 1000 for n in nanos]


def test_the_table_property_wins_over_the_environment(
    catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DOWNCAST_NS_ENV, "true")
    table = catalog.create_table(
        "db.t", pa.schema([("ts", pa.timestamp("us"))]), properties={DOWNCAST_NS: "false"}
    )
    with pytest.raises(SchemaMismatchError, match="without losing its nanoseconds"):
        table.append(_ns_table())


def test_a_bad_setting_is_refused_naming_it(
    catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = catalog.create_table("db.t", pa.schema([("ts", pa.timestamp("us"))]))
    monkeypatch.setenv(DOWNCAST_NS_ENV, "yes")
    with pytest.raises(InvalidValueError, match=f"environment variable {DOWNCAST_NS_ENV}='yes'"):
        table.append(_ns_table())
    monkeypatch.delenv(DOWNCAST_NS_ENV)
    with table.transaction() as txn:
        txn.set_properties({DOWNCAST_NS: "1"})
    with pytest.raises(InvalidValueError, match=f"table property {DOWNCAST_NS}='1'"):
        table.append(_ns_table())


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_create_table_from_ns_arrow_schema(
    catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch, zone: str | None
) -> None:
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ns", zone))])
    with pytest.raises(InvalidSchemaError) as info:
        catalog.create_table("db.v2", schema)
    message = str(info.value)
    assert "format-version 3" in message and f"{DOWNCAST_NS}=true" in message
    assert DOWNCAST_NS_ENV in message
    # v3: nanosecond columns, values written as they are.
    v3 = catalog.create_table("db.v3", schema, properties={"format-version": "3"})
    nano = TimestamptzNanoType() if zone else TimestampNanoType()
    assert v3.schema().find_type("ts") == nano
    data = pa.table({"id": pa.array(range(len(NS) + 1), pa.int64()), "ts": _ns_table(zone)["ts"]})
    v3.append(data)
    read = v3.scan().to_arrow().sort_by("id").column("ts").combine_chunks()
    assert read.cast(pa.int64()).to_pylist() == [*NS, None]
    (file,) = _files(v3)
    assert _long(file.lower_bounds[2]) == min(NS) and _long(file.upper_bounds[2]) == max(NS)
    # With the downcast asked for, microsecond columns (as pyiceberg, on any version).
    for version in ("2", "3"):
        down = catalog.create_table(
            f"db.down{version}",
            schema,
            properties={DOWNCAST_NS: "true", "format-version": version},
        )
        assert down.schema().find_type("ts") == (TimestamptzType() if zone else TimestampType())
        down.append(data)
    monkeypatch.setenv(DOWNCAST_NS_ENV, "true")
    assert catalog.create_table("db.env", schema).schema().find_type("ts") == (
        TimestamptzType() if zone else TimestampType()
    )


# --- union_by_name with a pyarrow schema ---------------------------------------------------------


def test_union_by_name_takes_a_pyarrow_schema(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", pa.schema([("id", pa.int32()), ("name", pa.string())]))
    other = pa.schema(
        [
            ("id", pa.int64()),  # a promotion
            pa.field("extra", pa.struct([("a", pa.uuid()), ("b", pa.list_(pa.string()))])),
            ("name", pa.string()),
        ]
    )
    with table.update_schema() as update:
        update.union_by_name(other)
    schema = table.schema()
    assert schema.find_type("id") == LongType()
    assert schema.find_type("extra.a") == UUIDType()
    assert schema.find_type("extra.b.element") == StringType()
    assert [f.name for f in schema.fields] == ["id", "name", "extra"]
    assert schema.highest_field_id() == table.metadata.last_column_id == 6
    # A narrower type is kept, as with a frazil Schema.
    with table.update_schema() as update:
        update.union_by_name(pa.schema([("id", pa.int16())]))
    assert table.schema().find_type("id") == LongType()
    with pytest.raises(InvalidUpdateError, match="a frazil Schema or a pyarrow Schema, got dict"):
        table.update_schema().union_by_name({"id": "long"})


def test_union_by_name_with_ns_timestamps_follows_the_table(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", pa.schema([("id", pa.int32())]))
    ns = pa.schema([("ts", pa.timestamp("ns"))])
    with pytest.raises(InvalidSchemaError, match="format-version 3, or set the table property"):
        table.update_schema().union_by_name(ns)
    with table.transaction() as txn:
        txn.set_properties({DOWNCAST_NS: "true"})
    with table.update_schema() as update:
        update.union_by_name(ns)
    assert table.schema().find_type("ts") == TimestampType()
    v3 = catalog.create_table(
        "db.v3", pa.schema([("id", pa.int32())]), properties={"format-version": "3"}
    )
    with v3.update_schema() as update:
        update.union_by_name(ns)
    assert v3.schema().find_type("ts") == TimestampNanoType()
    assert v3.schema().find_type("id") == IntegerType()
