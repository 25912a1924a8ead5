"""frazil's data-file metrics against Java's Parquet writer for the same rows: Spark writes
them to an Iceberg table (Hadoop catalog), and its ``files`` metadata table is compared column
by column with what :func:`frazil.table.write.write_data_files` produces for the table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.io import FileIO
from frazil.metadata import read_metadata
from frazil.table.write import write_data_files

pytestmark = pytest.mark.interop

LONG = "é€\U0001d11e" * 10 + "z"
ROWS = [
    (1, 1.5, float("nan"), "a", b"\x00\x01", dt.date(2024, 1, 2)),
    (2, -0.0, -0.0, LONG, b"\xff" * 20, dt.date(1969, 12, 31)),
    (3, 0.0, 2.5, "\U0010ffff" * 17, None, None),
    (4, float("nan"), None, None, b"x" * 30, dt.date(2024, 3, 1)),
    (5, None, 0.0, "zz" * 12, b"", dt.date(2000, 1, 1)),
]


def _maps(row: Any) -> dict[str, dict[int, Any]]:
    out = {}
    for key in ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                "upper_bounds"):  # fmt: skip
        value = row[key] or {}
        out[key] = {int(k): (bytes(v) if isinstance(v, bytearray) else v) for k, v in value.items()}
    return out


def test_metrics_match_javas_parquet_writer(
    spark: Any, warehouse: Path, catalog: str, tmp_path: Path
) -> None:
    name = f"{catalog}.db.write_metrics"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, d DOUBLE, f FLOAT, s STRING, b BINARY, day DATE) "
        "USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    frame = spark.createDataFrame(ROWS, "id long, d double, f float, s string, b binary, day date")
    frame.coalesce(1).writeTo(name).append()
    (java,) = [r.asDict() for r in spark.sql(f"SELECT * FROM {name}.files").collect()]

    folder = warehouse / "db" / "write_metrics" / "metadata"
    latest = max(folder.glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    md = read_metadata(str(latest)).replace(location=str(tmp_path / "t"))
    data = pa.table(
        {
            "id": pa.array([r[0] for r in ROWS], pa.int64()),
            "d": pa.array([r[1] for r in ROWS], pa.float64()),
            "f": pa.array([r[2] for r in ROWS], pa.float32()),
            "s": pa.array([r[3] for r in ROWS], pa.string()),
            "b": pa.array([r[4] for r in ROWS], pa.binary()),
            "day": pa.array([r[5] for r in ROWS], pa.date32()),
        }
    )
    (mine,) = write_data_files(md, FileIO(), data)
    assert mine.record_count == java["record_count"] == len(ROWS)
    theirs = _maps(java)
    for key, expected in theirs.items():
        assert getattr(mine, key) == expected, (key, getattr(mine, key), expected)
    assert set(mine.column_sizes or {}) == set(java["column_sizes"])
    assert mine.sort_order_id == java["sort_order_id"]
