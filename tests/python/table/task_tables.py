"""A table for the file-scan-task JSON tests (tests/python/table/test_scan_task_json.py and
tests/interop/test_scan_task_json_parity.py): every primitive type as an identity partition plus
bucket, truncate, day, hour, month and year; files with metrics, split offsets, key metadata and
delete files of every kind, drawn by hypothesis; and comparable views of tasks.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

from frazil.table.scan import file_scan_task_from_json
from hypothesis import strategies as st
from scan_helpers import TableWriter, data_file, entry

T0 = 1_700_000_000_000
UTC = dt.timezone.utc

COLUMNS = {
    "i": "int",
    "l": "long",
    "f": "float",
    "d": "double",
    "dec": "decimal(9,2)",
    "b": "boolean",
    "dt": "date",
    "t": "time",
    "ts": "timestamp",
    "tz": "timestamptz",
    "s": "string",
    "u": "uuid",
    "bin": "binary",
    "fx": "fixed[3]",
    "payload": "binary",  # never filtered on: its random bounds are never decoded
    "n": "long",  # not partitioned
}
FIELD_ID = {name: n + 1 for n, name in enumerate(COLUMNS)}
SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": FIELD_ID[k], "name": k, "required": False, "type": v} for k, v in COLUMNS.items()
    ],
}
# Partition field name -> (transform, source column).
PARTITION = {
    **{f"p_{k}": ("identity", k) for k in list(COLUMNS)[:14]},
    "l_bucket": ("bucket[8]", "l"),
    "s_trunc": ("truncate[3]", "s"),
    "tz_day": ("day", "tz"),
    "ts_hour": ("hour", "ts"),
    "dt_month": ("month", "dt"),
    "dt_year": ("year", "dt"),
}
SPEC: dict[str, Any] = {
    "spec-id": 0,
    "fields": [
        {"name": name, "transform": transform, "source-id": FIELD_ID[source], "field-id": 1000 + n}
        for n, (name, (transform, source)) in enumerate(PARTITION.items())
    ],
}
UNPARTITIONED: dict[str, Any] = {"spec-id": 1, "fields": []}

FILE_FIELDS = (
    "content",
    "file_path",
    "file_format",
    "spec_id",
    "record_count",
    "file_size_in_bytes",
    "partition",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
    "key_metadata",
    "split_offsets",
    "equality_ids",
    "sort_order_id",
    "first_row_id",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
)


def comparable(value: Any) -> Any:
    """Comparable form: NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("float", value, math.copysign(1.0, value))
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [comparable(v) for v in value]
    return value


def file_view(file: Any) -> dict[str, Any]:
    return {name: comparable(getattr(file, name)) for name in FILE_FIELDS}


METRIC_FIELDS = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)


def task_view(task: Any, delete_metrics: bool = True) -> dict[str, Any]:
    deletes = [file_view(d) for d in task.delete_files]
    if not delete_metrics:
        deletes = [{k: v for k, v in d.items() if k not in METRIC_FIELDS} for d in deletes]
    return {
        "file": file_view(task.file),
        "deletes": deletes,
        "start": task.start,
        "length": task.length,
        "spec_id": task.spec_id,
        "residual": comparable(json.loads(task.residual_json)),
        "schema": json.loads(task.schema_json),
    }


def assert_round_trip(task: Any, stats: bool = True) -> Any:
    """``stats``: whether the task's scan included column stats. Without them the task's
    delete files hide their metrics in Python but write them to JSON (Java keeps delete
    files' stats in every scan), so a task read back shows them: compared through the JSON."""
    text = task.to_json()
    back = file_scan_task_from_json(text)
    assert task_view(back, stats) == task_view(task, stats)
    assert str(back.residual) == str(task.residual)
    assert comparable(json.loads(back.to_json())) == comparable(json.loads(text))
    assert back.file.data_sequence_number is None
    assert back.file.file_sequence_number is None
    return back


# --- strategies ----------------------------------------------------------------------------

_BASE = dt.datetime(1900, 1, 1)
_timestamps = st.datetimes(min_value=_BASE, max_value=dt.datetime(2200, 1, 1))
PARTITION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "p_i": st.integers(-(2**31), 2**31 - 1),
    "p_l": st.integers(-(2**63), 2**63 - 1),
    "p_f": st.floats(width=32),
    "p_d": st.floats(),
    "p_dec": st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False),
    "p_b": st.booleans(),
    "p_dt": st.dates(min_value=dt.date(1, 1, 1)),
    "p_t": st.times(),
    "p_ts": _timestamps,
    "p_tz": _timestamps.map(lambda t: t.replace(tzinfo=UTC)),
    "p_s": st.text(max_size=20),
    "p_u": st.uuids(),
    "p_bin": st.binary(max_size=20),
    "p_fx": st.binary(min_size=3, max_size=3),
    "l_bucket": st.integers(0, 7),
    "s_trunc": st.text(max_size=3),
    "tz_day": st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 1, 1)),
    "ts_hour": st.integers(-1_000_000, 2_000_000),
    "dt_month": st.integers(-24_000, 24_000),
    "dt_year": st.integers(-2000, 2000),
}
partitions = st.fixed_dictionaries({k: st.none() | v for k, v in PARTITION_VALUES.items()})
counts = st.dictionaries(st.sampled_from([*FIELD_ID.values(), 9999]), st.integers(0, 2**40))
bounds = st.dictionaries(st.sampled_from([FIELD_ID["payload"], 9999]), st.binary(max_size=12))


@st.composite
def metrics(draw: st.DrawFn) -> dict[str, Any]:
    out = {}
    for name in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts"):
        if draw(st.booleans()):
            out[name] = draw(counts)
    for name in ("lower_bounds", "upper_bounds"):
        if draw(st.booleans()):
            out[name] = draw(bounds)
    return out


@st.composite
def files(draw: st.DrawFn) -> dict[str, Any]:
    size = draw(st.integers(1, 10_000))
    out: dict[str, Any] = {
        "partition": draw(partitions),
        "records": draw(st.integers(0, 2**40)),
        "size": size,
        "metrics": draw(metrics()),
        "split_offsets": draw(
            st.none()
            | st.lists(st.integers(0, size - 1), min_size=1, max_size=4, unique=True).map(sorted)
        ),
        "key_metadata": draw(st.none() | st.binary(max_size=16)),
        "sort_order_id": draw(st.none() | st.just(0)),
        "format": draw(st.sampled_from(["PARQUET", "AVRO", "ORC"])),
        # Delete files: partition-scoped and file-scoped position deletes, equality deletes in
        # the same partition and global ones (unpartitioned spec), or a deletion vector.
        "deletes": draw(
            st.lists(st.sampled_from(["pos", "pos-file", "eq", "eq-global"]), max_size=4)
            | st.just(["dv"])
        ),
        "eq_ids": draw(st.lists(st.sampled_from(list(FIELD_ID.values())), min_size=1, max_size=3)),
    }
    return out


FILTERS = [
    None,
    "n < 100",
    "n IN (1, 2, 3) OR s STARTS WITH 'a'",
    "NOT (n = 7) AND ts < TIMESTAMP '2100-01-01T00:00:00'",
    "tz >= '2000-01-01T00:00:00+00:00' AND n IS NOT NULL",
    "i > 0",
    "dec <= DECIMAL '12.50' OR b = true",
    "t >= TIME '12:00:00' OR d IS NAN OR f > 1.5",
    "dt NOT IN (DATE '2001-01-01', DATE '1999-12-31')",
    "u != UUID '12345678-9abc-def0-1234-56789abcdef0' AND bin = X'00ff'",
    "fx = X'616263' OR s NOT STARTS WITH 'x'",
]


def write_table(root: Path, specs: list[dict[str, Any]]) -> Any:
    w = TableWriter(root, schema=SCHEMA, specs=(SPEC, UNPARTITIONED), format_version=3)
    data = []
    for n, f in enumerate(specs):
        partition = dict(f["partition"])
        if partition["p_u"] is not None:
            partition["p_u"] = partition["p_u"].bytes
        f["written_partition"] = partition
        data.append(
            entry(
                data_file(
                    w.path(f"{n}.parquet"),
                    partition,
                    records=f["records"],
                    size=f["size"],
                    file_format=f["format"],
                    split_offsets=f["split_offsets"],
                    key_metadata=f["key_metadata"],
                    sort_order_id=f["sort_order_id"],
                    **f["metrics"],
                )
            )
        )
    w.commit(1, T0, [(data, 0, "data")])
    scoped, global_ = [], []
    for n, f in enumerate(specs):
        target = w.path(f"{n}.parquet")
        for k, kind in enumerate(f["deletes"]):
            path = w.path(f"{n}-{kind}-{k}")
            common = {"records": 3 + k, "size": 100 + 10 * n + k, **f["metrics"]}
            if kind == "pos":
                scoped.append(data_file(path, f["written_partition"], content=1, **common))
            elif kind == "pos-file":
                scoped.append(
                    data_file(
                        path,
                        f["written_partition"],
                        content=1,
                        referenced_data_file=target,
                        **common,
                    )
                )
            elif kind == "eq":
                scoped.append(
                    data_file(
                        path,
                        f["written_partition"],
                        content=2,
                        equality_ids=f["eq_ids"],
                        sort_order_id=f["sort_order_id"],
                        **common,
                    )
                )
            elif kind == "eq-global":
                global_.append(data_file(path, {}, content=2, equality_ids=f["eq_ids"], **common))
            else:
                scoped.append(
                    data_file(
                        path + ".puffin",
                        f["written_partition"],
                        content=1,
                        file_format="PUFFIN",
                        referenced_data_file=target,
                        content_offset=4,
                        content_size_in_bytes=30 + k,
                        **common,
                    )
                )
    manifests = []
    if scoped:
        manifests.append(([entry(d) for d in scoped], 0, "deletes"))
    if global_:
        manifests.append(([entry(d) for d in global_], 1, "deletes"))
    if manifests:
        w.commit(2, T0 + 1, manifests, parent=1)
    return w.table()
