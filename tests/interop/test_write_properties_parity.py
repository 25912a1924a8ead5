"""Table properties that change what is written, against Iceberg Java 1.10.2 (issue 22):

- every property Java's ``TableProperties`` names is honoured, refused or without effect on
  what frazil writes, by frazil's one list (``frazil.table._properties``);
- data file locations are Java's ``LocationProviders.locationsFor(...).newDataLocation(...)``
  for random table locations, data paths, partitions and file names, with and without object
  storage;
- Java reads a table frazil wrote with object storage on;
- Java's bloom filter row-group filter reads the bloom filters frazil writes, and Java's
  writer and frazil's agree on which columns get bloom filters and statistics and on the
  metrics that follow (``write.parquet.stats-enabled.column.*``)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.errors import InvalidValueError
from frazil.io import FileIO
from frazil.metadata import read_metadata
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import _properties
from frazil.table.write import write_data_files
from frazil.table.write._location_provider import LocationProvider
from frazil.table.write._partition import Partitioner
from frazil.types import NestedField, StructType, parse_type
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py4j.protocol import Py4JJavaError

pytestmark = pytest.mark.interop

EPOCH = dt.date(1970, 1, 1)


# --- the list ------------------------------------------------------------------------------------


def _java_property_keys(java: Any) -> set[str]:
    """The property names among the String constants of Java's TableProperties (its defaults
    and enumerated values left out), less the reserved ones, which are never stored."""
    cls = java.java.lang.Class.forName("org.apache.iceberg.TableProperties")
    reserved = set(cls.getField("RESERVED_PROPERTIES").get(None).toArray())
    values = {"NONE", "HASH", "RANGE"}
    keys = set()
    for field in cls.getFields():
        name = field.getName()
        if field.getType().getName() != "java.lang.String" or "_DEFAULT" in name:
            continue
        if any(name.endswith(f"_MODE_{v}") for v in values):
            continue
        keys.add(str(field.get(None)))
    return keys - reserved


def _handling(key: str) -> str | None:
    """Which of frazil's lists names ``key`` (the key itself, else its longest prefix)."""
    best: tuple[int, str] | None = None
    for kind, table in (
        ("honoured", _properties.HONOURED),
        ("refused", _properties.REFUSED),
        ("without effect", _properties.WITHOUT_EFFECT),
    ):
        for name in table:
            if key == name:
                return kind
            if name.endswith((".", "-")) and key.startswith(name):
                if best is None or len(name) > best[0]:
                    best = (len(name), kind)
    return None if best is None else best[1]


def test_every_java_table_property_is_on_frazil_s_list(java: Any) -> None:
    keys = _java_property_keys(java)
    assert len(keys) > 90  # all of them, not an empty reflection
    unlisted = sorted(k for k in keys if _handling(k) is None)
    assert unlisted == []
    # Spot checks of the lists' meaning.
    assert _handling("write.parquet.bloom-filter-enabled.column.a.b") == "honoured"
    assert _handling("write.location-provider.impl") == "refused"
    assert _handling("write.delete.parquet.page-row-limit") == "honoured"
    assert _handling("write.delete.parquet.row-group-check-min-record-count") == "without effect"
    assert _handling("write.delete.mode") == "honoured"


# --- data file locations -------------------------------------------------------------------------

SCHEMA = Schema(
    NestedField(1, "id", parse_type("int"), False),
    NestedField(2, "s", parse_type("string"), False),
    NestedField(3, "d", parse_type("date"), False),
)
SPECS = [
    PartitionSpec(),
    PartitionSpec(PartitionField(2, 1000, "identity", "s")),
    PartitionSpec(
        PartitionField(1, 1000, "bucket[8]", "id_bucket"),
        PartitionField(3, 1001, "day", "d_day"),
    ),
    PartitionSpec(
        PartitionField(2, 1000, "truncate[3]", "s_trunc"),
        PartitionField(1, 1001, "identity", "id"),
    ),
]

_SEGMENT_CHARS = st.sampled_from([*"abcXYZ019 -_+=%é€.~!$&'(),;@", "𝄞"])
_segment = st.one_of(
    st.text(_SEGMENT_CHARS, min_size=1, max_size=8), st.sampled_from([".", "..", "db", "t"])
)
_roots = st.sampled_from(
    [
        "s3://bucket",
        "s3a://bucket",
        "gs://b",
        "file:",
        "file://",
        "hdfs://nn:8020",
        "",
        "abfss://c@a",
    ]
)


@st.composite
def _locations(draw: st.DrawFn) -> str:
    segments = draw(st.lists(_segment, min_size=1, max_size=5))
    # Java refuses an empty location; doubled and trailing slashes are kept in.
    joiner = draw(st.sampled_from(["/", "/", "/", "//"]))
    return draw(_roots) + "/" + joiner.join(segments) + draw(st.sampled_from(["", "", "/", "//"]))


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    location = draw(_locations())
    properties: dict[str, str] = {}
    data_path = draw(st.sampled_from(["none", "inside", "outside"]))
    if data_path == "inside":
        properties["write.data.path"] = location.rstrip("/") + "/" + draw(_segment)
    elif data_path == "outside":
        properties["write.data.path"] = draw(_locations())
    if draw(st.booleans()):
        properties["write.object-storage.enabled"] = draw(st.sampled_from(["true", "false"]))
    if draw(st.booleans()):
        properties["write.object-storage.partitioned-paths"] = draw(
            st.sampled_from(["true", "false"])
        )
    rows = draw(
        st.lists(
            st.tuples(
                st.integers(-(2**31), 2**31 - 1),
                st.text(max_size=6),
                st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1)),
            ),
            min_size=1,
            max_size=4,
        )
    )
    names = draw(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=3))
    return {
        "location": location,
        "properties": properties,
        "spec": draw(st.sampled_from(SPECS)),
        "rows": rows,
        "names": names,
    }


def _java_value(value: Any) -> Any:
    return (value - EPOCH).days if isinstance(value, dt.date) else value


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=_cases())
def test_data_locations_are_java_s(java: Any, case: dict[str, Any]) -> None:
    iceberg = java.org.apache.iceberg
    properties = java.java.util.HashMap()
    for key, value in case["properties"].items():
        properties.put(key, value)
    try:
        theirs = iceberg.LocationProviders.locationsFor(case["location"], properties)
    except Py4JJavaError as error:
        # A location ending in "." or "..": no table context (Java's IllegalStateException).
        assert "Path context must not end with a slash" in str(error.java_exception)
        with pytest.raises(InvalidValueError, match="ends in no directory name"):
            LocationProvider.for_table(case["location"], case["properties"])
        return
    mine = LocationProvider.for_table(case["location"], case["properties"])
    spec: PartitionSpec = case["spec"]
    java_schema = iceberg.SchemaParser.fromJson(json.dumps(SCHEMA.to_json()))
    java_spec = iceberg.PartitionSpecParser.fromJson(java_schema, json.dumps(spec.to_json()))
    rows = pa.table(
        {
            "id": pa.array([r[0] for r in case["rows"]], pa.int32()),
            "s": pa.array([r[1] for r in case["rows"]], pa.string()),
            "d": pa.array([r[2] for r in case["rows"]], pa.date32()),
        }
    )
    partitions, _ = Partitioner(SCHEMA, spec).split(rows)
    for partition, _span in partitions:
        data = iceberg.PartitionData(java_spec.partitionType())
        for i, f in enumerate(spec.fields):
            data.set(i, _java_value(partition.values[f.name]))
        for name in case["names"]:
            if spec.is_unpartitioned():
                expected = theirs.newDataLocation(name)
                got = mine.new_data_location(None, name)
            else:
                expected = theirs.newDataLocation(java_spec, data, name)
                got = mine.new_data_location(partition.path, name)
            assert got == expected, (case, partition.path, name)


# --- Java reads what frazil wrote ----------------------------------------------------------------


def _object_storage_table(tmp_path: Path, properties: dict[str, str]) -> Any:
    catalog = InMemoryCatalog(warehouse=str(tmp_path / "w"))
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", parse_type("long"), True),
        NestedField(2, "cat", parse_type("string"), False),
        NestedField(3, "v", parse_type("double"), False),
    )
    table = catalog.create_table(
        "db.t",
        schema,
        partition_spec=PartitionSpec(PartitionField(2, 1000, "identity", "cat")),
        properties=properties,
    )
    for cat, ids in (("a b", [1, 2, 3]), ("é/x", [4, 5]), ("c", [6])):
        table.append(
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "cat": [cat] * len(ids),
                    "v": pa.array([i / 4 for i in ids], pa.float64()),
                }
            )
        )
    return table


@pytest.mark.parametrize("partitioned_paths", ["true", "false"])
def test_java_reads_a_table_frazil_wrote_with_object_storage(
    spark: Any, java: Any, tmp_path: Path, partitioned_paths: str
) -> None:
    properties = {
        "write.object-storage.enabled": "true",
        "write.object-storage.partitioned-paths": partitioned_paths,
        "write.data.path": str(tmp_path / "objects"),  # outside: Java's table context
    }
    table = _object_storage_table(tmp_path, properties)
    path = table.metadata_location
    reader = spark.read.format("iceberg")
    java_rows = sorted(tuple(r) for r in reader.load(path).select("id", "cat", "v").collect())
    assert java_rows == sorted(
        (i, c, i / 4) for c, ids in (("a b", [1, 2, 3]), ("é/x", [4, 5]), ("c", [6])) for i in ids
    )
    assert [r[0] for r in reader.load(path).filter("cat = 'é/x'").select("id").collect()] in (
        [4, 5],
        [5, 4],
    )
    files = sorted(
        r[0]
        for r in spark.read.format("iceberg").load(f"{path}#files").select("file_path").collect()
    )
    assert files == sorted(t.file.file_path for t in table.scan().plan_files())
    # Each file is where Java's own provider puts a file of that name and partition.
    iceberg = java.org.apache.iceberg
    java_properties = java.java.util.HashMap()
    for key, value in properties.items():
        java_properties.put(key, value)
    provider = iceberg.LocationProviders.locationsFor(table.location(), java_properties)
    java_table = iceberg.SchemaParser.fromJson(json.dumps(table.schema().to_json()))
    java_spec = iceberg.PartitionSpecParser.fromJson(java_table, json.dumps(table.spec().to_json()))
    for task in table.scan().plan_files():
        data = iceberg.PartitionData(java_spec.partitionType())
        data.set(0, task.file.partition["cat"])
        # With the table context after the hash, the file name stays whole.
        name = task.file.file_path.rsplit("/", 1)[1]
        assert "/db/t/" in task.file.file_path
        assert ("cat=" in task.file.file_path) is (partitioned_paths == "true")
        assert provider.newDataLocation(java_spec, data, name) == task.file.file_path


# --- bloom filters and statistics -----------------------------------------------------------------


def _java_bloom_reads(
    java: Any, schema_json: str, path: str, column: str, values: list[Any]
) -> list[bool]:
    """Java's ``ParquetBloomRowGroupFilter.shouldRead`` for ``column = value`` over the one row
    group of a Parquet file, reading its bloom filter with parquet-java."""
    iceberg = java.org.apache.iceberg
    parquet = java.org.apache.iceberg.shaded.org.apache.parquet
    schema = iceberg.SchemaParser.fromJson(schema_json)
    conf = java.org.apache.hadoop.conf.Configuration()
    source = parquet.hadoop.util.HadoopInputFile.fromPath(
        java.org.apache.hadoop.fs.Path(path), conf
    )
    reader = parquet.hadoop.ParquetFileReader.open(source)
    try:
        file_schema = reader.getFileMetaData().getSchema()
        (group,) = list(reader.getRowGroups())
        blooms = reader.getBloomFilterDataReader(group)
        out = []
        for value in values:
            expression = iceberg.expressions.Expressions.equal(column, value)
            bloom_filter = iceberg.parquet.ParquetBloomRowGroupFilter(schema, expression)
            out.append(bool(bloom_filter.shouldRead(file_schema, group, blooms)))
        return out
    finally:
        reader.close()


def test_java_reads_frazil_s_bloom_filters(java: Any, spark: Any, tmp_path: Path) -> None:
    catalog = InMemoryCatalog(warehouse=str(tmp_path / "w"))
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", parse_type("long"), False),
        NestedField(2, "s", parse_type("string"), False),
        NestedField(3, "st", StructType((NestedField(4, "a", parse_type("int"), False),)), False),
    )
    table = catalog.create_table(
        "db.t",
        schema,
        properties={
            "write.parquet.bloom-filter-enabled.column.id": "true",
            "write.parquet.bloom-filter-enabled.column.s": "true",
            "write.parquet.bloom-filter-enabled.column.st.a": "true",
            "write.parquet.bloom-filter-fpp.column.s": "0.001",
        },
    )
    n = 2000
    table.append(
        pa.table(
            {
                "id": pa.array(range(0, 2 * n, 2), pa.int64()),
                "s": [f"value {i}" for i in range(n)],
                "st": pa.array([{"a": i * 3} for i in range(n)], pa.struct([("a", pa.int32())])),
            }
        )
    )
    (task,) = table.scan().plan_files()
    path = task.file.file_path
    schema_json = json.dumps(table.schema().to_json())
    present = _java_bloom_reads(java, schema_json, path, "id", list(range(0, 2 * n, 38)))
    assert all(present)
    absent = _java_bloom_reads(java, schema_json, path, "id", list(range(1, 2 * n, 10)))
    assert sum(absent) <= len(absent) * 0.05  # odd ids were never written
    assert all(
        _java_bloom_reads(java, schema_json, path, "s", [f"value {i}" for i in range(0, n, 97)])
    )
    assert (
        sum(_java_bloom_reads(java, schema_json, path, "s", [f"other {i}" for i in range(300)]))
        <= 5
    )
    assert all(
        _java_bloom_reads(java, schema_json, path, "st.a", [i * 3 for i in range(0, n, 101)])
    )
    # And Spark's scans through them find the rows.
    loaded = spark.read.format("iceberg").load(table.metadata_location)
    assert [r[0] for r in loaded.filter("s = 'value 7'").select("id").collect()] == [14]
    assert loaded.filter("id = 15").count() == 0


ROWS = [
    (1, 1.5, "a", 10),
    (2, None, "b", None),
    (3, 2.5, None, 30),
    (4, float("nan"), "d", 40),
    (5, 0.0, "e", 50),
]
COLUMN_PROPERTIES = {
    "write.parquet.bloom-filter-enabled.column.id": "true",
    "write.parquet.bloom-filter-enabled.column.st.a": "true",
    "write.parquet.stats-enabled.column.s": "false",
    "write.parquet.stats-enabled.column.d": "false",
    "write.parquet.stats-enabled.column.st.a": "false",
}


def _maps(row: Any) -> dict[str, dict[int, Any]]:
    out = {}
    for key in ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                "upper_bounds"):  # fmt: skip
        value = row[key] or {}
        out[key] = {int(k): (bytes(v) if isinstance(v, bytearray) else v) for k, v in value.items()}
    return out


def test_bloom_and_statistics_columns_and_metrics_match_java(
    spark: Any, warehouse: Path, catalog: str, tmp_path: Path
) -> None:
    name = f"{catalog}.db.write_column_properties"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    properties = ", ".join(f"'{k}'='{v}'" for k, v in COLUMN_PROPERTIES.items())
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, d DOUBLE, s STRING, st STRUCT<a: INT>) USING iceberg "
        f"TBLPROPERTIES ('format-version'='2', {properties})"
    )
    frame = spark.createDataFrame(
        [(i, d, s, None if a is None else (a,)) for i, d, s, a in ROWS],
        "id long, d double, s string, st struct<a: int>",
    )
    frame.coalesce(1).writeTo(name).append()
    (java_file,) = [r.asDict() for r in spark.sql(f"SELECT * FROM {name}.files").collect()]

    folder = warehouse / "db" / "write_column_properties" / "metadata"
    latest = max(folder.glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    md = read_metadata(str(latest)).replace(location=str(tmp_path / "t"))
    assert {k: md.properties[k] for k in COLUMN_PROPERTIES} == COLUMN_PROPERTIES
    data = pa.table(
        {
            "id": pa.array([r[0] for r in ROWS], pa.int64()),
            "d": pa.array([r[1] for r in ROWS], pa.float64()),
            "s": pa.array([r[2] for r in ROWS], pa.string()),
            "st": pa.array(
                [None if r[3] is None else {"a": r[3]} for r in ROWS],
                pa.struct([("a", pa.int32())]),
            ),
        }
    )
    (mine,) = write_data_files(md, FileIO(), data)
    theirs = _maps(java_file)
    for key, expected in theirs.items():
        assert getattr(mine, key) == expected, (key, getattr(mine, key), expected)

    def columns(path: str) -> dict[str, tuple[bool, bool]]:
        metadata = pq.read_metadata(path)
        return {
            metadata.schema.column(i).path: (
                metadata.row_group(0).column(i).is_stats_set,
                metadata.row_group(0).column(i).bloom_filter_offset is not None,
            )
            for i in range(metadata.num_columns)
        }

    # (statistics, bloom filter) per column: the same choices in both files. Java's bloom
    # filters are 1 MB each (no value count given to parquet-java); frazil's fit the values.
    assert (
        columns(mine.file_path)
        == columns(java_file["file_path"])
        == {
            "id": (True, True),
            "d": (False, False),
            "s": (False, False),
            "st.a": (False, True),
        }
    )
