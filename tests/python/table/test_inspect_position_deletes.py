"""``table.inspect.position_deletes()``: Java 1.10's PositionDeletesTable columns, and one row
per deleted position of the live Parquet position delete files and deletion vectors of a
snapshot (tables written with scan_helpers.TableWriter; Java parity in
tests/interop/test_inspect_parity.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from frazil import _native
from frazil.errors import FrazilError, InvalidDataError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scan_helpers import UNPARTITIONED, TableWriter, data_file, entry

T1 = 1_700_000_000_000
FILE_PATH_ID, POS_ID, ROW_ID = 2147483546, 2147483545, 2147483544
X_DAY = {"cat": "x", "ts_day": 19724}  # 2024-01-02


def _field(name: str, type_: pa.DataType, field_id: int, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable, metadata={b"PARQUET:field_id": str(field_id).encode()})


def write_position_deletes(
    path: str, rows: list[tuple[str, int]], stored_rows: list[dict[str, Any]] | None = None
) -> None:
    """A Parquet position delete file (spec: "Position Delete Files"), with the optional
    ``row`` column when ``stored_rows`` is given."""
    fields = [_field("file_path", pa.string(), FILE_PATH_ID), _field("pos", pa.int64(), POS_ID)]
    columns = [pa.array([p for p, _ in rows]), pa.array([n for _, n in rows], pa.int64())]
    if stored_rows is not None:
        row_type = pa.struct(
            [
                _field("id", pa.int64(), 1),
                _field("cat", pa.string(), 3, True),
                _field("dropped", pa.int32(), 77, True),  # not in the table schema
            ]
        )
        fields.append(_field("row", row_type, ROW_ID, True))
        columns.append(pa.array(stored_rows, row_type))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(columns, schema=pa.schema(fields)), path)


def deletion_vectors(path: str, vectors: list[tuple[str, list[int]]], partition: Any) -> list[Any]:
    """The delete files of a Puffin file of deletion vectors (spec: "Deletion Vectors")."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    blobs = _native.write_deletion_vector_puffin(path, vectors)
    return [
        data_file(
            path,
            partition,
            content=1,
            file_format="PUFFIN",
            records=b["record_count"],
            size=b["file_size_in_bytes"],
            referenced_data_file=b["referenced_data_file"],
            content_offset=b["content_offset"],
            content_size_in_bytes=b["content_size_in_bytes"],
        )
        for b in blobs
    ]


def null_row(**values: Any) -> dict[str, Any]:
    row = dict.fromkeys(["id", "ts", "cat", "price", "flag", "dt"])
    row.update(values)
    return row


def test_v3_table_with_position_delete_files_and_deletion_vectors(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", format_version=3)
    a, b = w.path("a.parquet"), w.path("b.parquet")
    plain, with_rows = w.path("pd1.parquet"), w.path("pd2.parquet")
    write_position_deletes(plain, [(a, 3), (b, 0), (a, 1)])
    write_position_deletes(
        with_rows,
        [(a, 7)],
        [{"id": 70, "cat": "x", "dropped": 5}],
    )
    dvs = deletion_vectors(w.path("dv.puffin"), [(a, [2, 9]), (b, [1 << 33])], X_DAY)
    gone = w.path("gone.parquet")
    write_position_deletes(gone, [(a, 4)])
    equality = data_file(w.path("eq.parquet"), X_DAY, content=2, equality_ids=[1])
    w.commit(
        1,
        T1,
        [
            (
                [
                    entry(data_file(plain, X_DAY, content=1, records=3)),
                    entry(data_file(with_rows, X_DAY, content=1, records=1)),
                    *(entry(d) for d in dvs),
                    entry(
                        data_file(gone, X_DAY, content=1, records=1),
                        status=2,
                        snapshot_id=1,
                        sequence_number=1,
                        file_sequence_number=1,
                    ),
                    entry(equality),
                ],
                0,
                "deletes",
            ),
            ([entry(data_file(w.path("u.parquet"), content=1, records=0))], 1, "deletes"),
        ],
    )
    # An empty position delete file of the unpartitioned spec contributes no rows.
    write_position_deletes(w.path("u.parquet"), [])
    result = w.table().inspect.position_deletes()
    row_type = result.schema.field("row").type
    assert result.schema == pa.schema(
        [
            pa.field("file_path", pa.string(), False),
            pa.field("pos", pa.int64(), False),
            pa.field("row", row_type),
            pa.field(
                "partition",
                pa.struct([pa.field("cat", pa.string()), pa.field("ts_day", pa.date32())]),
                False,
            ),
            pa.field("spec_id", pa.int32(), False),
            pa.field("delete_file_path", pa.string(), False),
            pa.field("content_offset", pa.int64()),
            pa.field("content_size_in_bytes", pa.int64()),
        ]
    )
    assert row_type.names == ["id", "ts", "cat", "price", "flag", "dt"]
    partition = {"cat": "x", "ts_day": dt.date(2024, 1, 2)}

    def row(path: str, pos: int, delete: str, stored: Any = None, dv: Any = None) -> Any:
        offset, size = (
            (None, None) if dv is None else (dv["content_offset"], dv["content_size_in_bytes"])
        )
        return {
            "file_path": path,
            "pos": pos,
            "row": stored,
            "partition": partition,
            "spec_id": 0,
            "delete_file_path": delete,
            "content_offset": offset,
            "content_size_in_bytes": size,
        }

    dv_a, dv_b = dvs
    assert result.to_pylist() == [
        row(a, 3, plain),
        row(b, 0, plain),
        row(a, 1, plain),
        row(a, 7, with_rows, null_row(id=70, cat="x")),
        row(a, 2, dv_a["file_path"], dv=dv_a),
        row(a, 9, dv_a["file_path"], dv=dv_a),
        row(b, 1 << 33, dv_b["file_path"], dv=dv_b),
    ]


def test_v2_unpartitioned_table_has_no_partition_or_dv_columns(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", specs=(UNPARTITIONED,), default_spec_id=1)
    a, pd = w.path("a.parquet"), w.path("pd.parquet")
    write_position_deletes(pd, [(a, 5)])
    w.commit(1, T1, [([entry(data_file(pd, content=1, records=1))], 1, "deletes")])
    result = w.table().inspect.position_deletes()
    assert result.column_names == [
        "file_path",
        "pos",
        "row",
        "spec_id",
        "delete_file_path",
    ]
    assert result.to_pylist() == [
        {"file_path": a, "pos": 5, "row": None, "spec_id": 1, "delete_file_path": pd}
    ]


def test_as_of_a_snapshot_and_without_snapshots(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t")
    assert w.table().inspect.position_deletes().num_rows == 0
    a = w.path("a.parquet")
    first, second = w.path("pd1.parquet"), w.path("pd2.parquet")
    write_position_deletes(first, [(a, 1)])
    write_position_deletes(second, [(a, 2), (a, 3)])
    w.commit(1, T1, [([entry(data_file(first, X_DAY, content=1, records=1))], 0, "deletes")])
    w.commit(
        2,
        T1 + 1,
        [([entry(data_file(second, X_DAY, content=1, records=2))], 0, "deletes")],
        parent=1,
    )
    table = w.table()
    assert table.inspect.position_deletes(snapshot_id=1).column("pos").to_pylist() == [1]
    assert table.inspect.position_deletes().column("pos").to_pylist() == [1, 2, 3]


@pytest.mark.parametrize("file_format", ["AVRO", "ORC"])
def test_other_delete_file_formats_are_refused_by_name(tmp_path: Path, file_format: str) -> None:
    w = TableWriter(tmp_path / "t")
    pd = w.path("pd.avro")
    w.commit(
        1,
        T1,
        [([entry(data_file(pd, X_DAY, content=1, file_format=file_format))], 0, "deletes")],
    )
    with pytest.raises(InvalidDataError, match=f"pd.avro.*{file_format}"):
        w.table().inspect.position_deletes()


def test_a_corrupt_deletion_vector_is_refused(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", format_version=3)
    a = w.path("a.parquet")
    (dv,) = deletion_vectors(w.path("dv.puffin"), [(a, [1, 2])], X_DAY)
    data = bytearray(Path(dv["file_path"]).read_bytes())
    data[dv["content_offset"] + 10] ^= 0xFF  # inside the bitmap: the CRC no longer matches
    Path(dv["file_path"]).write_bytes(bytes(data))
    w.commit(1, T1, [([entry(dv)], 0, "deletes")])
    with pytest.raises(FrazilError, match=r"dv\.puffin"):
        w.table().inspect.position_deletes()


def test_a_deletion_vector_without_its_data_file_is_refused(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", format_version=3)
    (dv,) = deletion_vectors(w.path("dv.puffin"), [(w.path("a.parquet"), [1])], X_DAY)
    dv["referenced_data_file"] = None
    w.commit(1, T1, [([entry(dv)], 0, "deletes")])
    with pytest.raises(InvalidDataError, match=r"dv\.puffin.*referenced_data_file"):
        w.table().inspect.position_deletes()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    vectors=st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.sets(st.integers(0, (1 << 40) - 1), min_size=1, max_size=50),
        min_size=1,
    ),
    as_dv=st.booleans(),
)
def test_every_deleted_position_is_one_row(
    tmp_path_factory: pytest.TempPathFactory, vectors: dict[str, set[int]], as_dv: bool
) -> None:
    w = TableWriter(tmp_path_factory.mktemp("t"), format_version=3)
    by_path = {w.path(f"{k}.parquet"): sorted(v) for k, v in vectors.items()}
    if as_dv:
        files = deletion_vectors(w.path("dv.puffin"), list(by_path.items()), X_DAY)
    else:
        rows = [(p, n) for p, positions in by_path.items() for n in positions]
        write_position_deletes(w.path("pd.parquet"), rows)
        files = [data_file(w.path("pd.parquet"), X_DAY, content=1, records=len(rows))]
    w.commit(1, T1, [([entry(f) for f in files], 0, "deletes")])
    result = w.table().inspect.position_deletes()
    found: dict[str, list[int]] = {}
    for path, pos in zip(
        result.column("file_path").to_pylist(), result.column("pos").to_pylist(), strict=True
    ):
        found.setdefault(path, []).append(pos)
    assert found == by_path
