"""Delete files older than every planned data file (issue 10, "Planning": delete manifests
whose sequence numbers are older than every live data file are skipped).

A position delete applies to data files with a data sequence number up to its own, an
equality delete to smaller ones only (spec: "Scan Planning"). After a rewrite gives every data
file a newer sequence number, older delete files apply to nothing, and their manifests are not
read: each test removes those manifest files from disk and plans again, which fails if the
planner opens them. The floor is the smallest ``min_sequence_number`` of the data manifests
the scan plans, after partition pruning.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import fastavro
import pytest
from frazil import StaticTable
from frazil.errors import InvalidDataError, NotFoundError
from scan_helpers import TableWriter, data_file, entry

DAY = dt.date(2024, 5, 1)
T1 = 1_700_000_000_000


def _data(w: TableWriter, name: str, cat: str = "a") -> dict[str, Any]:
    return data_file(w.path(name), {"cat": cat, "ts_day": DAY})


def _position(w: TableWriter, name: str, cat: str = "a") -> dict[str, Any]:
    return data_file(w.path(name), {"cat": cat, "ts_day": DAY}, content=1)


def _equality(w: TableWriter, name: str) -> dict[str, Any]:
    return data_file(w.path(name), {}, content=2, equality_ids=[1])


def _deletes_only(row: Mapping[str, Any]) -> bool:
    return int(row["content"]) == 1


def _with_old_deletes(root: Path) -> TableWriter:
    """Snapshot 1 (seq 1) adds data file ``a`` (manifest m1); snapshot 2 (seq 2) adds position
    deletes ``pos2`` (m2) and global equality deletes ``eq2`` (m3)."""
    w = TableWriter(root)
    w.commit(1, T1, [([entry(_data(w, "a.parquet"))], 0, "data")])
    w.commit(
        2,
        T1 + 1,
        [
            ([entry(_position(w, "pos2.parquet"))], 0, "deletes"),
            ([entry(_equality(w, "eq2.parquet"))], 1, "deletes"),
        ],
        parent=1,
    )
    return w


def _plan(table: StaticTable, **kwargs: Any) -> list[tuple[str, list[str]]]:
    return [
        (Path(t.file.file_path).name, sorted(Path(d.file_path).name for d in t.delete_files))
        for t in table.scan(**kwargs).plan_files()
    ]


def test_a_rewrite_leaves_older_delete_manifests_unread(tmp_path: Path) -> None:
    w = _with_old_deletes(tmp_path / "t")
    # Snapshot 3 (seq 3) rewrites a as b: the old data manifest is not carried over.
    w.commit(3, T1 + 2, [([entry(_data(w, "b.parquet"))], 0, "data")], 2, _deletes_only)
    table = w.table()
    assert _plan(table) == [("b.parquet", [])]
    assert _plan(table, snapshot_id=2) == [("a.parquet", ["eq2.parquet", "pos2.parquet"])]
    for name in ("m2.avro", "m3.avro"):
        (w.meta / name).unlink()
    assert _plan(table) == [("b.parquet", [])]  # m2 and m3 were not opened
    with pytest.raises(NotFoundError, match=r"m[23]\.avro"):
        _plan(table, snapshot_id=2)  # where they apply, they are read


@pytest.mark.parametrize("threads", [1, 2])
def test_deletes_of_the_floors_own_sequence_number(tmp_path: Path, threads: int) -> None:
    """Position deletes of the floor's sequence number apply, equality deletes do not."""
    w = _with_old_deletes(tmp_path / "t")
    w.commit(
        3,
        T1 + 2,
        [
            ([entry(_data(w, "b.parquet"))], 0, "data"),  # m4
            ([entry(_position(w, "pos3.parquet"))], 0, "deletes"),  # m5
            ([entry(_equality(w, "eq3.parquet"))], 1, "deletes"),  # m6
        ],
        2,
        _deletes_only,
    )
    table = w.table()
    options = {"threads": threads}
    assert _plan(table, options=options) == [("b.parquet", ["pos3.parquet"])]
    (w.meta / "m2.avro").unlink()
    (w.meta / "m3.avro").unlink()
    assert _plan(table, options=options) == [("b.parquet", ["pos3.parquet"])]
    (w.meta / "m5.avro").unlink()
    with pytest.raises(NotFoundError, match=r"m5\.avro"):
        _plan(table, options=options)


def test_the_oldest_planned_data_file_sets_the_floor(tmp_path: Path) -> None:
    """With the old data file still live, the old deletes apply to it (and not to the new
    one); a filter that prunes its manifest raises the floor past them."""
    w = _with_old_deletes(tmp_path / "t")
    w.commit(3, T1 + 2, [([entry(_data(w, "b.parquet", cat="b"))], 0, "data")], 2)
    # Global equality deletes apply to every partition; pos2 only to cat a.
    table = w.table()
    assert _plan(table) == [
        ("a.parquet", ["eq2.parquet", "pos2.parquet"]),
        ("b.parquet", []),
    ]
    assert _plan(table, row_filter="cat = 'b'") == [("b.parquet", [])]
    for name in ("m2.avro", "m3.avro"):
        (w.meta / name).unlink()
    assert _plan(table, row_filter="cat = 'b'") == [("b.parquet", [])]
    with pytest.raises(NotFoundError):
        _plan(table)


def _add_stray_data_entry(manifest: Path, path: str) -> None:
    """Rewrites the delete manifest ``manifest`` (with fastavro: frazil's writer refuses
    this) with one more entry: a data file of data sequence number 1."""
    with manifest.open("rb") as f:
        reader = fastavro.reader(f)
        schema = json.loads(reader.metadata["avro.schema"])
        metadata = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
        records = list(reader)
    stray = copy.deepcopy(records[0])
    stray["sequence_number"] = 1
    stray["file_sequence_number"] = 1
    stray["data_file"]["content"] = 0
    stray["data_file"]["file_path"] = path
    with manifest.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [*records, stray], metadata=metadata)


def test_a_data_file_in_a_delete_manifest_is_refused_even_below_the_floor(
    tmp_path: Path,
) -> None:
    """The floor never hides a broken delete manifest it reads: a data file listed in one is
    an error, whatever its sequence number."""
    w = _with_old_deletes(tmp_path / "t")
    w.commit(
        3,
        T1 + 2,
        [
            ([entry(_data(w, "b.parquet"))], 0, "data"),
            ([entry(_position(w, "pos3.parquet"))], 0, "deletes"),  # m5
        ],
        2,
        _deletes_only,
    )
    table = w.table()
    assert _plan(table) == [("b.parquet", ["pos3.parquet"])]
    _add_stray_data_entry(w.meta / "m5.avro", w.path("stray.parquet"))
    with pytest.raises(InvalidDataError, match=r"lists data file .*stray\.parquet"):
        _plan(table)
