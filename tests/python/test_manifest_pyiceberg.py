"""Tables written by pyiceberg (another writer, from PyPI): frazil reads their manifest
lists and manifests, and every value equals what pyiceberg itself reads back.

pyiceberg 0.12 writes ``data_file.equality_ids`` as ``array<long>`` where the spec
says ``list<int>`` (Java fails on it); frazil reads the longs as the ints they are.
The tables use format versions 1 and 2 (pyiceberg 0.12 cannot write v3), every
common transform, two appends, a copy-on-write delete (DELETED and EXISTING entries),
an overwrite, schema evolution and partition evolution.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from frazil import manifest as m
from frazil import values
from frazil.errors import InvalidDataError
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.conversions import from_bytes as pyiceberg_from_bytes
from pyiceberg.manifest import ManifestFile
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
)
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

UTC = dt.timezone.utc

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "d", DateType()),
    NestedField(5, "price", DecimalType(9, 2)),
    NestedField(6, "u", UUIDType()),
    NestedField(7, "f", DoubleType()),
    NestedField(8, "i", IntegerType()),
    NestedField(9, "b", BooleanType()),
    NestedField(10, "fl", FloatType()),
    NestedField(11, "t", TimeType()),
    NestedField(12, "local", TimestampType()),
    NestedField(13, "bin", BinaryType()),
    identifier_field_ids=[1],
)
SPEC = PartitionSpec(
    PartitionField(3, 1000, DayTransform(), "ts_day"),
    PartitionField(1, 1001, BucketTransform(4), "id_bucket"),
    PartitionField(2, 1002, TruncateTransform(2), "name_trunc"),
    PartitionField(4, 1003, IdentityTransform(), "d"),
    PartitionField(5, 1004, IdentityTransform(), "price"),
)


def _rows(ids: list[int]) -> dict[str, list[Any]]:
    def pick(i: int, options: list[Any]) -> Any:
        return options[i % len(options)]

    return {
        "id": ids,
        "name": [pick(i, ["alpha", "beta", None, "alpine", "日本語", ""]) for i in ids],
        "ts": [
            pick(
                i,
                [
                    dt.datetime(2024, 1, 1, 12, tzinfo=UTC),
                    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                    None,
                    dt.datetime(2024, 1, 1, 1, tzinfo=UTC),
                ],
            )
            for i in ids
        ],
        "d": [pick(i, [dt.date(2024, 1, 1), dt.date(1960, 5, 5), None]) for i in ids],
        "price": [pick(i, [decimal.Decimal("1.50"), decimal.Decimal("-99.99"), None]) for i in ids],
        "u": [
            pick(i, [uuid.UUID(int=1).bytes, uuid.UUID(int=2**127 + 5).bytes, None]) for i in ids
        ],
        "f": [pick(i, [1.5, float("nan"), -0.0, None, -1e300]) for i in ids],
        "i": [pick(i, [7, -7, None, 2**31 - 1, -(2**31)]) for i in ids],
        "b": [pick(i, [True, False, None]) for i in ids],
        "fl": [pick(i, [0.25, float("-inf"), None]) for i in ids],
        "t": [pick(i, [dt.time(1, 2, 3, 4), dt.time(23, 59, 59, 999999), None]) for i in ids],
        "local": [pick(i, [dt.datetime(2000, 2, 29, 1, 2, 3), None]) for i in ids],
        "bin": [pick(i, [b"\x00\xff", b"", None]) for i in ids],
    }


def _build(root: Path, version: int) -> Table:
    catalog = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("ns")
    table = catalog.create_table(
        "ns.t",
        schema=SCHEMA,
        partition_spec=SPEC,
        properties={"format-version": str(version)},
    )
    arrow_schema = table.schema().as_arrow()
    table.append(pa.Table.from_pydict(_rows(list(range(1, 13))), schema=arrow_schema))
    table.append(pa.Table.from_pydict(_rows(list(range(13, 20))), schema=arrow_schema))
    table.delete("id = 2")  # copy-on-write: DELETED and EXISTING entries
    with table.update_schema() as update:
        update.add_column("extra", LongType())
    with table.update_spec() as update:
        update.add_field("local", MonthTransform(), "local_month")
    table = catalog.load_table("ns.t")
    rows = _rows(list(range(20, 26)))
    rows["extra"] = [5, None, 7, 8, 9, 10]
    table.append(pa.Table.from_pydict(rows, schema=table.schema().as_arrow()))
    table.overwrite(
        pa.Table.from_pydict(_rows([100]), schema=SCHEMA.as_arrow()).append_column(
            "extra", pa.array([1], pa.int64())
        ),
        overwrite_filter="id = 5",
    )
    return catalog.load_table("ns.t")


@pytest.fixture(scope="module", params=[1, 2], ids=["v1", "v2"])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return _build(tmp_path_factory.mktemp(f"pyiceberg-v{request.param}"), request.param)


def _manifests(table: Table) -> Iterator[tuple[Any, list[ManifestFile], pa.Table]]:
    for snapshot in table.snapshots():
        yield snapshot, snapshot.manifests(table.io), m.read_manifest_list(snapshot.manifest_list)


def _plain(value: Any) -> Any:
    """A pyiceberg or frazil value in one comparable form."""
    if hasattr(value, "value") and not isinstance(value, bytes | int | float | str):
        return value.value  # pyiceberg enums
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return (value - dt.date(1970, 1, 1)).days
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch) // dt.timedelta(microseconds=1)
    return value


def test_manifest_lists_match_pyiceberg(table: Table) -> None:
    snapshots = 0
    for snapshot, theirs, ours in _manifests(table):
        snapshots += 1
        rows = ours.to_pylist()
        assert [r["manifest_path"] for r in rows] == [f.manifest_path for f in theirs]
        for row, f in zip(rows, theirs, strict=True):
            assert row["manifest_length"] == f.manifest_length
            assert row["partition_spec_id"] == f.partition_spec_id
            assert row["content"] == _plain(f.content)
            # v1 lists carry no sequence numbers: both read them as 0.
            assert row["sequence_number"] == (f.sequence_number or 0)
            assert row["min_sequence_number"] == (f.min_sequence_number or 0)
            assert row["added_snapshot_id"] == f.added_snapshot_id
            for name in (
                "added_files_count",
                "existing_files_count",
                "deleted_files_count",
                "added_rows_count",
                "existing_rows_count",
                "deleted_rows_count",
            ):
                assert row[name] == getattr(f, name), name
            summaries = [
                {
                    "contains_null": s.contains_null,
                    "contains_nan": s.contains_nan,
                    "lower_bound": s.lower_bound,
                    "upper_bound": s.upper_bound,
                }
                for s in f.partitions or []
            ]
            assert (row["partitions"] or []) == summaries
            assert row["key_metadata"] == f.key_metadata
        assert snapshot.manifest_list.startswith("file://")
    assert snapshots == 6


def _entry_view(entry: Any, spec_fields: list[str]) -> dict[str, Any]:
    df = entry.data_file
    partition = {name: _plain(df.partition[i]) for i, name in enumerate(spec_fields)}
    return {
        "status": _plain(entry.status),
        "snapshot_id": entry.snapshot_id,
        "sequence_number": entry.sequence_number,
        "file_sequence_number": entry.file_sequence_number,
        "content": _plain(df.content),
        "file_path": df.file_path,
        "file_format": _plain(df.file_format),
        "partition": partition,
        "record_count": df.record_count,
        "file_size_in_bytes": df.file_size_in_bytes,
        "column_sizes": df.column_sizes or None,
        "value_counts": df.value_counts or None,
        "null_value_counts": df.null_value_counts or None,
        "nan_value_counts": df.nan_value_counts or None,
        "lower_bounds": df.lower_bounds or None,
        "upper_bounds": df.upper_bounds or None,
        "key_metadata": df.key_metadata,
        "split_offsets": df.split_offsets,
        "equality_ids": df.equality_ids,
        "sort_order_id": df.sort_order_id,
    }


def _row_view(row: dict[str, Any]) -> dict[str, Any]:
    df = row["data_file"]
    out = {k: row[k] for k in ("status", "snapshot_id", "sequence_number", "file_sequence_number")}
    for name in (
        "content",
        "file_path",
        "file_format",
        "record_count",
        "file_size_in_bytes",
        "key_metadata",
        "split_offsets",
        "equality_ids",
        "sort_order_id",
    ):
        out[name] = df[name]
    out["partition"] = {k: _plain(v) for k, v in df["partition"].items()}
    for name in (
        "column_sizes",
        "value_counts",
        "null_value_counts",
        "nan_value_counts",
        "lower_bounds",
        "upper_bounds",
    ):
        out[name] = None if df[name] is None else dict(df[name]) or None
    return out


def test_manifests_match_pyiceberg(table: Table) -> None:
    specs = table.specs()
    entries = 0
    for _, theirs, ours in _manifests(table):
        tables = m.read_manifests(ours)
        assert len(tables) == len(theirs)
        for manifest, decoded in zip(theirs, tables, strict=True):
            spec_fields = [f.name for f in specs[manifest.partition_spec_id].fields]
            expected = [
                _entry_view(e, spec_fields)
                for e in manifest.fetch_manifest_entry(table.io, discard_deleted=False)
            ]
            got = [_row_view(r) for r in decoded.to_pylist()]
            assert got == expected, manifest.manifest_path
            entries += len(got)
            # One at a time, with the manifest-list row, gives the same.
            row = next(r for r in ours.to_pylist() if r["manifest_path"] == manifest.manifest_path)
            single = m.read_manifest(manifest.manifest_path, manifest_file=row)
            assert [_row_view(r) for r in single.to_pylist()] == expected
    assert entries > 20


def test_bounds_decode_like_pyiceberg(table: Table) -> None:
    # Every lower and upper bound pyiceberg wrote, decoded by frazil.values and by
    # pyiceberg's own conversions, gives the same value.
    schema = table.schema()
    checked = set()
    for _, _, ours in _manifests(table):
        for decoded in m.read_manifests(ours):
            for row in decoded.to_pylist():
                for name in ("lower_bounds", "upper_bounds"):
                    for field_id, raw in row["data_file"][name] or []:
                        field_type = schema.find_field(field_id).field_type
                        ours_value = values.from_bytes(str(field_type), raw)
                        theirs_value = pyiceberg_from_bytes(field_type, raw)
                        if isinstance(theirs_value, bytes) and isinstance(ours_value, uuid.UUID):
                            theirs_value = uuid.UUID(bytes=theirs_value)
                        if isinstance(field_type, DecimalType):
                            assert ours_value == theirs_value
                        elif isinstance(field_type, DateType | TimestampType | TimestamptzType):
                            assert _plain(ours_value) == theirs_value
                        elif isinstance(field_type, TimeType):
                            t = ours_value
                            micros = ((t.hour * 60 + t.minute) * 60 + t.second) * 10**6
                            assert micros + t.microsecond == theirs_value
                        else:
                            assert ours_value == theirs_value, (field_type, raw)
                        checked.add(str(field_type))
    assert checked >= {"long", "string", "timestamptz", "date", "decimal(9, 2)", "int", "uuid"}


def _pyiceberg_manifest(table: Table) -> Path:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    path = snapshot.manifests(table.io)[0].manifest_path
    return Path(path.removeprefix("file://"))


def test_pyiceberg_declares_equality_ids_as_longs(table: Table, tmp_path: Path) -> None:
    # The shape that made frazil refuse every pyiceberg manifest: array<long>.
    source = _pyiceberg_manifest(table)
    with open(source, "rb") as f:
        reader = fastavro.reader(f)
        avro = json.loads(reader.metadata["avro.schema"])
        meta = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
        records = list(reader)
    data_file = next(f for f in avro["fields"] if f["name"] == "data_file")["type"]
    names = [f["name"] for f in data_file["fields"]]
    if table.format_version == 1:
        # v1 manifests have no equality deletes, so no equality_ids field.
        assert "equality_ids" not in names and "content" not in names
        return
    equality = next(f for f in data_file["fields"] if f["name"] == "equality_ids")
    assert equality["type"][1]["items"] == "long"
    # The same schema with equality ids set (an equality delete file, which pyiceberg
    # cannot write itself), as fastavro writes it.
    for record in records:
        record["data_file"]["content"] = 2
        record["data_file"]["equality_ids"] = [1, 2**31 - 1]
    meta["content"] = "deletes"
    path = tmp_path / "eq.avro"
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(avro), records, metadata=meta)
    table_ = m.read_manifest(path, columns=["data_file.equality_ids"])
    assert table_.column("data_file").to_pylist() == [
        {"equality_ids": [1, 2**31 - 1]} for _ in records
    ]
    records[-1]["data_file"]["equality_ids"] = [1, 2**31]
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(avro), records, metadata=meta)
    with pytest.raises(InvalidDataError, match=r"equality_ids\.element.*2147483648"):
        m.read_manifest(path)
