"""The Parquet writer properties Java's ``Parquet.WriteBuilder`` reads change frazil's data files
as they change Java's (issue 22: honoured or refused, never ignored): page row limit, bloom
filters, per-column statistics, dictionaries, compression levels; a value frazil cannot use is
refused when the table is created, when it is set and before a write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import InvalidValueError
from frazil.io import FileIO
from frazil.manifest import DataFile
from frazil.table import SetProperties
from frazil.table.write import write_data_files
from hypothesis import given, settings
from hypothesis import strategies as st
from parquet_pages import data_page_values, page_headers
from write_helpers import col, schema_of, table_metadata

SCHEMA = schema_of(
    col(1, "id", "long"),
    col(2, "s", "string"),
    col(3, "d", "double"),
    col(4, "flag", "boolean"),
    col(
        5,
        "st",
        {"type": "struct", "fields": [col(6, "a", "int")]},
    ),
)


def _rows(n: int, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": [f"v{i % 7}" for i in ids],
            "d": pa.array([None if i % 5 == 0 else i / 2 for i in ids], pa.float64()),
            "flag": [i % 2 == 0 for i in ids],
            "st": pa.array([{"a": i * 3} for i in ids], pa.struct([pa.field("a", pa.int32())])),
        }
    )


def _write(tmp_path: Path, properties: dict[str, str], rows: pa.Table | None = None) -> DataFile:
    md = table_metadata(tmp_path, SCHEMA, properties=properties)
    (written,) = write_data_files(md, FileIO(), _rows(1000) if rows is None else rows)
    return written


def _column(path: str, name: str) -> Any:
    metadata = pq.read_metadata(path)
    names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    return metadata.row_group(0).column(names.index(name)), names.index(name)


# --- write.parquet.page-row-limit ---------------------------------------------------------------


def test_page_row_limit_caps_the_rows_of_every_page(tmp_path: Path) -> None:
    written = _write(tmp_path, {"write.parquet.page-row-limit": "64"})
    path = written.file_path
    for name in ("id", "s", "d", "st.a"):
        _, index = _column(path, name)
        pages = data_page_values(path, column=index)
        assert max(pages) <= 64 and sum(pages) == 1000, (name, pages)
    # Java's default (20,000 rows, parquet-java's too) keeps 1,000 rows in one page.
    default = _write(tmp_path / "default", {})
    assert data_page_values(default.file_path) == [1000]


# --- parquet.enable.dictionary ------------------------------------------------------------------


def test_enable_dictionary_false_writes_no_dictionary(tmp_path: Path) -> None:
    chunk, _ = _column(_write(tmp_path, {}).file_path, "s")
    assert chunk.has_dictionary_page  # seven distinct values: a dictionary pays
    written = _write(tmp_path / "plain", {"parquet.enable.dictionary": "false"})
    metadata = pq.read_metadata(written.file_path)
    for i in range(metadata.num_columns):
        assert not metadata.row_group(0).column(i).has_dictionary_page
        assert 2 not in [h[1] for h in page_headers(written.file_path, column=i)]
    assert pq.read_table(written.file_path).column("s").to_pylist() == _rows(1000)["s"].to_pylist()


# --- write.parquet.bloom-filter-* ----------------------------------------------------------------


def _probe(path: str, column: str, value: Any) -> bool:
    """DuckDB's reading of the bloom filter: True when it excludes ``value``."""
    ((excluded,),) = duckdb.execute(
        "SELECT bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?)", [path, column, value]
    ).fetchall()
    return bool(excluded)


def test_bloom_filters_are_written_for_the_columns_named(tmp_path: Path) -> None:
    written = _write(
        tmp_path,
        {
            "write.parquet.bloom-filter-enabled.column.id": "true",
            "write.parquet.bloom-filter-enabled.column.st.a": "true",
            "write.parquet.bloom-filter-enabled.column.s": "false",
            "write.parquet.bloom-filter-fpp.column.id": "0.001",
        },
    )
    path = written.file_path
    filtered = {
        name: _column(path, name)[0].bloom_filter_offset is not None
        for name in ("id", "s", "d", "flag", "st.a")
    }
    assert filtered == {"id": True, "s": False, "d": False, "flag": False, "st.a": True}
    # Every written value is in the filter; nearly every other one is excluded.
    assert not any(_probe(path, "id", i) for i in range(0, 1000, 7))
    excluded = sum(_probe(path, "id", i) for i in range(5000, 5400))
    assert excluded >= 390
    assert pq.read_table(path).num_rows == 1000


@settings(max_examples=25, deadline=None)
@given(
    max_bytes=st.sampled_from([32, 100, 1024, 4096, 1 << 20]),
    fpp=st.floats(min_value=1e-6, max_value=0.5),
    rows=st.integers(min_value=1, max_value=20_000),
)
def test_a_bloom_filter_never_exceeds_max_bytes(
    tmp_path_factory: pytest.TempPathFactory, max_bytes: int, fpp: float, rows: int
) -> None:
    written = _write(
        tmp_path_factory.mktemp("bloom"),
        {
            "write.parquet.bloom-filter-enabled.column.id": "true",
            "write.parquet.bloom-filter-fpp.column.id": repr(fpp),
            "write.parquet.bloom-filter-max-bytes": str(max_bytes),
        },
        _rows(rows),
    )
    chunk, _ = _column(written.file_path, "id")
    # The bitset (the filter less its header of a few bytes) is a power of two within the limit.
    assert chunk.bloom_filter_length is not None
    assert chunk.bloom_filter_length - 32 <= max_bytes
    assert not _probe(written.file_path, "id", rows - 1)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("write.parquet.bloom-filter-enabled.column.nope", "true", "no column 'nope'"),
        ("write.parquet.bloom-filter-enabled.column.st", "true", "not a primitive column"),
        ("write.parquet.bloom-filter-enabled.column.flag", "true", "is a boolean"),
        ("write.parquet.bloom-filter-enabled.column.id", "yes", "must be true or false"),
        ("write.parquet.bloom-filter-fpp.column.id", "1.5", "between 0 and 1"),
        ("write.parquet.bloom-filter-fpp.column.id", "often", "between 0 and 1"),
        ("write.parquet.bloom-filter-max-bytes", "16", "at least 32"),
        ("write.parquet.stats-enabled.column.nope", "false", "no column 'nope'"),
        ("write.parquet.page-row-limit", "0", "at least 1"),
        ("parquet.enable.dictionary", "no", "must be true or false"),
        ("write.parquet.row-group-check-max-record-count", "10", "at least"),
    ],
)
def test_a_parquet_setting_frazil_cannot_use_is_refused_at_creation_set_and_write(
    tmp_path: Path, key: str, value: str, message: str
) -> None:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/w")
    catalog.create_namespace("db")
    with pytest.raises(InvalidValueError, match=message) as created:
        catalog.create_table("db.t", SCHEMA, properties={key: value})
    assert key in str(created.value)
    assert not catalog.table_exists("db.t")
    table = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(InvalidValueError, match=message):
        with table.update_properties() as update:
            update.set(key, value)
    assert key not in catalog.load_table("db.t").properties
    # Set by another engine (a raw update, as Java would commit it): refused before writing.
    catalog.commit_table(table, [], [SetProperties({key: value})])
    with pytest.raises(InvalidValueError, match=message):
        catalog.load_table("db.t").append(_rows(3))
    assert catalog.load_table("db.t").current_snapshot() is None
    assert not list((tmp_path / "w").rglob("*.parquet"))


def test_an_old_problem_does_not_block_setting_another_property(tmp_path: Path) -> None:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/w")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    bad = {"write.parquet.bloom-filter-enabled.column.gone": "true"}
    catalog.commit_table(table, [], [SetProperties(bad)])
    table = catalog.load_table("db.t")
    with table.update_properties() as update:
        update.set("owner", "me")
        update.remove("write.parquet.bloom-filter-enabled.column.gone")
    table.append(_rows(3))
    assert table.scan().count() == 3


# --- write.parquet.stats-enabled.column.* ---------------------------------------------------------


def test_stats_disabled_columns_have_no_statistics_and_java_s_metrics(tmp_path: Path) -> None:
    properties = {
        "write.parquet.stats-enabled.column.s": "false",
        "write.parquet.stats-enabled.column.d": "false",
        "write.parquet.stats-enabled.column.st.a": "false",
        "write.parquet.stats-enabled.column.id": "true",
    }
    written = _write(tmp_path, properties)
    with_stats = _write(tmp_path / "all", {})
    path = written.file_path
    assert {
        name: _column(path, name)[0].is_stats_set for name in ("id", "s", "d", "flag", "st.a")
    } == {"id": True, "s": False, "d": False, "flag": True, "st.a": False}
    # Java's metrics come from the footer statistics, so s and st.a have none; its writer
    # counts floats and doubles itself, so d keeps counts, NaN count and bounds.
    assert written.value_counts == {1: 1000, 3: 1000, 4: 1000}
    assert written.null_value_counts == {1: 0, 3: 200, 4: 0}
    assert written.nan_value_counts == with_stats.nan_value_counts == {3: 0}
    assert set(written.lower_bounds or {}) == set(written.upper_bounds or {}) == {1, 3, 4}
    for field_id in (1, 3, 4):
        assert written.lower_bounds[field_id] == with_stats.lower_bounds[field_id]  # type: ignore[index]
        assert written.upper_bounds[field_id] == with_stats.upper_bounds[field_id]  # type: ignore[index]
    assert set(with_stats.value_counts or {}) == {1, 2, 3, 4, 6}


def test_stats_disabled_rows_read_back_and_filter(tmp_path: Path) -> None:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/w")
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.parquet.stats-enabled.column.s": "false"}
    )
    table.append(_rows(100))
    assert table.scan(row_filter="s = 'v3'").to_arrow().num_rows == len(
        [i for i in range(100) if i % 7 == 3]
    )


# --- compression ---------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["snappy", "lz4", "uncompressed"])
def test_a_level_is_ignored_for_codecs_without_levels_as_java(tmp_path: Path, codec: str) -> None:
    # Java's Parquet.WriteBuilder passes a level to zstd, gzip and brotli only.
    written = _write(
        tmp_path,
        {"write.parquet.compression-codec": codec, "write.parquet.compression-level": "3"},
    )
    chunk, _ = _column(written.file_path, "id")
    assert (
        chunk.compression
        == {"snappy": "SNAPPY", "lz4": "LZ4", "uncompressed": "UNCOMPRESSED"}[codec]
    )
    assert pq.read_table(written.file_path).num_rows == 1000


def test_the_zstd_level_changes_the_file(tmp_path: Path) -> None:
    rows = pa.table(
        {"id": pa.array(range(50_000), pa.int64()), "s": [f"row {i}" for i in range(50_000)]}
    )
    sizes = {}
    for level in ("1", "19"):
        md = table_metadata(
            tmp_path / level,
            schema_of(col(1, "id", "long"), col(2, "s", "string")),
            properties={"write.parquet.compression-level": level},
        )
        (written,) = write_data_files(md, FileIO(), rows)
        sizes[level] = written.file_size_in_bytes
    assert sizes["19"] < sizes["1"]


def test_lz4_raw_is_a_codec_name(tmp_path: Path) -> None:
    written = _write(tmp_path, {"write.parquet.compression-codec": "LZ4_RAW"})
    ((codec,),) = duckdb.execute(
        "SELECT DISTINCT compression FROM parquet_metadata(?)", [written.file_path]
    ).fetchall()
    assert codec == "LZ4_RAW"


# --- page and dictionary sizes --------------------------------------------------------------------


def test_page_and_dictionary_sizes_shape_the_pages(tmp_path: Path) -> None:
    rows = pa.table(
        {
            "id": pa.array(range(5000), pa.int64()),
            "s": [f"value-{i % 500:05d}" for i in range(5000)],  # a dictionary pays
        }
    )
    schema = schema_of(col(1, "id", "long"), col(2, "s", "string"))
    files = {}
    for name, properties in {
        "default": {},
        "small-pages": {"write.parquet.page-size-bytes": "2048"},
        "small-dictionary": {"write.parquet.dict-size-bytes": "1024"},
    }.items():
        md = table_metadata(tmp_path / name, schema, properties=properties)
        (written,) = write_data_files(md, FileIO(), rows)
        files[name] = written.file_path
    assert len(data_page_values(files["default"])) == 1
    # pyarrow measures a page every 1,024 values (its write batch).
    assert len(data_page_values(files["small-pages"])) == 5
    # Past 1 KB of dictionary the writer falls back to plain pages.
    for name, plain in (("default", False), ("small-dictionary", True)):
        # Data page headers: 1 type (0 a v1 data page), 5.2 its encoding (0 PLAIN).
        encodings = [h[5][2] for h in page_headers(files[name], column=1) if h[1] == 0]
        assert (0 in encodings) is plain, (name, encodings)
