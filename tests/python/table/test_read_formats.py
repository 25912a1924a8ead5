"""Reading ORC and Avro data files (issue 11, "Reading a task"), and selecting fields inside
lists and maps.

ORC files are read with pyarrow's ORC reader, their columns chosen by Java's ``iceberg.id`` type
attributes; Avro files with frazil's decoder, by the writer schema's ``field-id``,
``element-id``, ``key-id`` and ``value-id``. Both then go through the projection the Parquet
reader uses, so schema evolution, defaults, position deletes, filters and splits behave alike:
random rows written to each format read back equal to the written data, and one table may mix
formats.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
import pytest
from format_writers import write_avro, write_orc
from frazil import Schema, read_task
from frazil import types as t
from frazil.errors import InvalidDataError
from frazil.table._formats import orc_stripes
from frazil.table.read import scan_arrow_schema, select_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_helpers import DataTable, file_schema
from scan_helpers import data_file

UTC = dt.timezone.utc
FORMATS = ("PARQUET", "ORC", "AVRO")


class FormatTable(DataTable):
    """A :class:`DataTable` whose data files may be Parquet, ORC or Avro."""

    def write(
        self,
        file_format: str,
        rows: pa.Table | Mapping[str, Sequence[Any]],
        schema: Schema | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """A data file of ``rows`` in ``file_format``, and its manifest ``data_file``."""
        schema = schema or self.schema
        if file_format == "PARQUET":
            return self.data(self.write_parquet(rows, schema, **options))
        arrow = file_schema(schema)
        if isinstance(rows, pa.Table):
            table = rows.cast(arrow)
        else:
            length = len(next(iter(rows.values())))
            columns = {f.name: rows.get(f.name, [None] * length) for f in arrow}
            table = pa.table(columns, schema=arrow)
        self._files += 1
        path = self.writer.path(f"f{self._files}.{file_format.lower()}")
        extra: dict[str, Any] = {}
        if file_format == "ORC":
            write_orc(path, table, schema, **options)
            stripes = orc_stripes(orc.ORCFile(path).reader.serialized_file_tail())
            extra["split_offsets"] = [offset for offset, _, _ in stripes]
        else:
            write_avro(path, table, schema, **options)
        return data_file(
            path,
            records=table.num_rows,
            size=Path(path).stat().st_size,
            file_format=file_format,
            **extra,
        )


def _comparable(value: Any) -> Any:
    """A value with NaN made equal to itself (and -0.0 kept apart from 0.0)."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else (value, math.copysign(1, value))
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    return value


def _rows(table: pa.Table) -> list[Any]:
    return [_comparable(row) for row in table.to_pylist()]


# --- every type, every format ------------------------------------------------------------------

WIDE = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "b", t.BooleanType()),
    t.optional(3, "i", t.IntegerType()),
    t.optional(4, "f", t.FloatType()),
    t.optional(5, "d", t.DoubleType()),
    t.optional(6, "dec", t.DecimalType(9, 2)),
    t.optional(7, "big", t.DecimalType(38, 10)),
    t.optional(8, "day", t.DateType()),
    t.optional(9, "tm", t.TimeType()),
    t.optional(10, "ts", t.TimestampType()),
    t.optional(11, "tz", t.TimestamptzType()),
    t.optional(12, "s", t.StringType()),
    t.optional(13, "u", t.UUIDType()),
    t.optional(14, "fx", t.FixedType(3)),
    t.optional(15, "bin", t.BinaryType()),
    t.optional(
        16,
        "point",
        t.StructType((t.optional(17, "x", t.IntegerType()), t.required(18, "y", t.DoubleType()))),
    ),
    t.optional(19, "tags", t.ListType(20, t.LongType(), element_required=False)),
    t.optional(21, "attrs", t.MapType(22, t.StringType(), 23, t.IntegerType())),
    t.optional(24, "names", t.MapType(25, t.IntegerType(), 26, t.StringType())),
    t.optional(
        27,
        "events",
        t.ListType(
            28,
            t.StructType(
                (t.optional(29, "a", t.IntegerType()), t.optional(30, "b", t.StringType()))
            ),
        ),
    ),
)

# pyarrow's ORC reader gives timestamps as nanoseconds: years 1678 to 2261 fit.
_moment = st.datetimes(dt.datetime(1678, 1, 1), dt.datetime(2261, 12, 31))
_int = st.integers(-(2**31), 2**31 - 1)


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


_ROW = st.fixed_dictionaries(
    {
        "b": _optional(st.booleans()),
        "i": _optional(_int),
        "f": _optional(st.floats(width=32)),
        "d": _optional(st.floats()),
        "dec": _optional(st.decimals(Decimal("-9999999.99"), Decimal("9999999.99"), places=2)),
        "big": _optional(
            st.decimals(
                Decimal("-9999999999999999999999999999.9999999999"),
                Decimal("9999999999999999999999999999.9999999999"),
                places=10,
            )
        ),
        "day": _optional(st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))),
        "tm": _optional(st.times()),
        "ts": _optional(_moment),
        "tz": _optional(_moment.map(lambda m: m.replace(tzinfo=UTC))),
        "s": _optional(st.text(max_size=8)),
        "u": _optional(st.binary(min_size=16, max_size=16)),
        "fx": _optional(st.binary(min_size=3, max_size=3)),
        "bin": _optional(st.binary(max_size=8)),
        "point": _optional(st.fixed_dictionaries({"x": _optional(_int), "y": st.floats()})),
        "tags": _optional(st.lists(_optional(st.integers(-(2**63), 2**63 - 1)), max_size=3)),
        "attrs": _optional(
            st.dictionaries(st.text(max_size=4), _optional(_int), max_size=3).map(
                lambda d: list(d.items())
            )
        ),
        "names": _optional(
            st.dictionaries(_int, _optional(st.text(max_size=4)), max_size=3).map(
                lambda d: list(d.items())
            )
        ),
        "events": _optional(
            st.lists(
                _optional(
                    st.fixed_dictionaries(
                        {"a": _optional(_int), "b": _optional(st.text(max_size=4))}
                    )
                ),
                max_size=3,
            )
        ),
    }
)


def _wide_table(rows: list[dict[str, Any]]) -> pa.Table:
    columns: dict[str, list[Any]] = {f.name: [] for f in WIDE.fields}
    for n, row in enumerate(rows):
        columns["id"].append(n)
        for name, value in row.items():
            columns[name].append(value)
    return pa.table(columns, schema=file_schema(WIDE))


@pytest.mark.parametrize("file_format", ["ORC", "AVRO"])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(_ROW, max_size=12))
def test_random_rows_read_back_as_written(
    file_format: str, rows: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp(file_format.lower())
    table = FormatTable(root, WIDE)
    written = _wide_table(rows)
    table.commit([table.write(file_format, written)])
    result = table.table().scan().to_arrow()
    assert result.schema == scan_arrow_schema(WIDE)
    assert _rows(result) == _rows(written.cast(scan_arrow_schema(WIDE)))


# --- evolution, deletes, filters, splits -------------------------------------------------------

BASE = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(2, "name", t.StringType()),
    t.optional(3, "score", t.IntegerType()),
    t.optional(4, "ratio", t.FloatType()),
    t.optional(5, "amount", t.DecimalType(9, 2)),
    t.optional(6, "day", t.DateType()),
    t.optional(
        7,
        "point",
        t.StructType((t.optional(8, "x", t.IntegerType()), t.optional(9, "y", t.FloatType()))),
    ),
)


def _base_rows(n: int) -> dict[str, list[Any]]:
    return {
        "id": list(range(n)),
        "name": [None if i % 4 == 0 else f"n{i}" for i in range(n)],
        "score": [i * 3 - 7 for i in range(n)],
        "ratio": [i / 4 for i in range(n)],
        "amount": [Decimal(i).scaleb(-2) for i in range(n)],
        "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)],
        "point": [None if i % 5 == 0 else {"x": i, "y": i / 2} for i in range(n)],
    }


EVOLVED = Schema(
    t.optional(6, "when", t.TimestampType()),  # renamed, moved first, date -> timestamp
    t.optional(5, "amount", t.DecimalType(20, 2)),  # precision widened
    t.required(1, "key", t.LongType()),  # renamed
    t.optional(3, "score", t.LongType()),  # int -> long
    t.optional(4, "ratio", t.DoubleType()),  # float -> double
    t.optional(
        7,
        "point",
        t.StructType(
            (
                t.optional(9, "y", t.DoubleType()),
                t.optional(10, "z", t.IntegerType(), initial_default=7, write_default=7),
            )
        ),
    ),  # point.x dropped, point.z added
    t.optional(11, "flag", t.BooleanType(), initial_default=True, write_default=False),
    schema_id=1,
)  # name (2) dropped


@pytest.mark.parametrize("file_format", ["ORC", "AVRO"])
def test_evolution_and_position_deletes(file_format: str, tmp_path: Path) -> None:
    table = FormatTable(tmp_path, BASE, format_version=3)
    written = table.write(file_format, _base_rows(20))
    table.commit([written])
    deleted = [0, 3, 4, 11, 19]
    table.commit(deletes=[table.position_deletes([(written["file_path"], p) for p in deleted])])
    table.evolve(EVOLVED)
    loaded = table.table()
    result = loaded.scan().to_arrow()
    assert result.schema == scan_arrow_schema(EVOLVED)
    kept = [i for i in range(20) if i not in deleted]
    assert result.column("key").to_pylist() == kept
    assert result.column("when").to_pylist() == [
        dt.datetime(2024, 1, 1) + dt.timedelta(days=i) for i in kept
    ]
    assert result.column("amount").to_pylist() == [Decimal(i).scaleb(-2) for i in kept]
    assert result.column("score").to_pylist() == [i * 3 - 7 for i in kept]
    assert result.column("ratio").to_pylist() == [i / 4 for i in kept]
    assert result.column("point").to_pylist() == [
        None if i % 5 == 0 else {"y": i / 2, "z": 7} for i in kept
    ]
    assert result.column("flag").to_pylist() == [True] * len(kept)
    filtered = loaded.scan(row_filter="score > 20 and key < 15").to_arrow()
    assert filtered.column("key").to_pylist() == [i for i in kept if i * 3 - 7 > 20 and i < 15]
    with_meta = loaded.scan(selected_fields=("key", "_pos", "_file")).to_arrow()
    assert with_meta.column("_pos").to_pylist() == kept
    assert set(with_meta.column("_file").to_pylist()) == {written["file_path"]}


@pytest.mark.parametrize("file_format", ["ORC", "AVRO"])
def test_split_tasks_read_each_row_once_at_its_position(file_format: str, tmp_path: Path) -> None:
    table = FormatTable(tmp_path, BASE)
    rows = _base_rows(3000)
    options = {"stripe_size": 4096} if file_format == "ORC" else {"sync_interval": 2048}
    written = table.write(file_format, rows, **options)
    table.commit([written])
    deleted = list(range(0, 3000, 7))
    table.commit(deletes=[table.position_deletes([(written["file_path"], p) for p in deleted])])
    loaded = table.table()
    scan = loaded.scan(
        selected_fields=("id", "_pos"),
        options={"read.split.target-size": 4000, "read.split.open-file-cost": 0},
    )
    tasks = [task for group in scan.plan_tasks() for task in group.tasks]
    assert len(tasks) > 2
    owned = []
    projected = select_schema(loaded.schema(), ["id"])
    for task in tasks:
        batches = list(
            read_task(
                task,
                loaded.schema(),
                projected,
                specs=loaded.specs(),
                metadata_columns=("_pos",),
                batch_size=100,
            )
        )
        owned.append(sum(b.num_rows for b in batches))
        for batch in batches:
            # Positions stay absolute in every split.
            assert batch.column("id").to_pylist() == batch.column("_pos").to_pylist()
    assert sum(owned) == 3000 - len(deleted)
    assert sum(1 for n in owned if n) > 1  # the rows really are spread over the splits
    ids = scan.to_arrow().column("id").to_pylist()
    assert sorted(ids) == [i for i in range(3000) if i % 7]


def test_mixed_formats_in_one_table(tmp_path: Path) -> None:
    table = FormatTable(tmp_path, BASE, format_version=3)
    files = []
    for n, file_format in enumerate(FORMATS):
        rows = {k: v[n * 5 : n * 5 + 5] for k, v in _base_rows(15).items()}
        files.append(table.write(file_format, rows))
        table.commit([files[-1]])
    table.commit(deletes=[table.position_deletes([(f["file_path"], 1) for f in files])])
    table.evolve(EVOLVED)
    result = table.table().scan(row_filter="key != 12").to_arrow()
    assert sorted(result.column("key").to_pylist()) == [0, 2, 3, 4, 5, 7, 8, 9, 10, 13, 14]
    by_key = {r["key"]: r for r in result.to_pylist()}
    assert by_key[7]["point"] == {"y": 3.5, "z": 7}
    assert by_key[13]["when"] == dt.datetime(2024, 1, 14)


# --- nested field pruning ----------------------------------------------------------------------

NESTED = Schema(
    t.required(1, "id", t.LongType()),
    t.optional(
        2,
        "location",
        t.StructType(
            (t.optional(3, "city", t.StringType()), t.optional(4, "zip", t.IntegerType()))
        ),
    ),
    t.optional(
        5,
        "points",
        t.ListType(
            6,
            t.StructType(
                (t.optional(7, "x", t.IntegerType()), t.optional(8, "y", t.IntegerType()))
            ),
        ),
    ),
    t.optional(
        9,
        "attrs",
        t.MapType(
            10,
            t.StringType(),
            11,
            t.StructType((t.optional(12, "u", t.StringType()), t.optional(13, "v", t.LongType()))),
        ),
    ),
    t.optional(14, "plain", t.ListType(15, t.IntegerType())),
)

NESTED_ROWS: dict[str, list[Any]] = {
    "id": [1, 2, 3, 4],
    "location": [
        {"city": "Oslo", "zip": 1},
        None,
        {"city": None, "zip": 3},
        {"city": "B", "zip": None},
    ],
    "points": [[{"x": 1, "y": 2}, None], None, [], [{"x": None, "y": 5}]],
    "attrs": [[("a", {"u": "p", "v": 1})], None, [("b", None)], []],
    "plain": [[1], None, [], [2, 3]],
}


def test_select_schema_prunes_inside_lists_and_maps() -> None:
    selected = select_schema(NESTED, ["points.element.x", "attrs.value.v", "location.city"])
    assert selected.find_field("points").field_type == t.ListType(
        6, t.StructType((t.optional(7, "x", t.IntegerType()),))
    )
    assert selected.find_field("attrs").field_type == t.MapType(
        10, t.StringType(), 11, t.StructType((t.optional(13, "v", t.LongType()),))
    )
    assert [f.name for f in selected.find_field("location").field_type.fields] == ["city"]
    # A selected element, value or key brings all of it (Java's PruneColumns).
    assert select_schema(NESTED, ["points.element"]).find_field("points") == NESTED.find_field(
        "points"
    )
    assert select_schema(NESTED, ["attrs.key"]).find_field("attrs") == NESTED.find_field("attrs")
    assert select_schema(NESTED, ["plain.element"]).find_field("plain") == NESTED.find_field(
        "plain"
    )


@pytest.mark.parametrize("file_format", FORMATS)
def test_select_fields_inside_lists_and_maps(file_format: str, tmp_path: Path) -> None:
    table = FormatTable(tmp_path, NESTED)
    table.commit([table.write(file_format, NESTED_ROWS)])
    scan = table.table().scan(
        selected_fields=("points.element.x", "attrs.value.v", "location.city")
    )
    result = scan.to_arrow()
    assert result.column_names == ["location", "points", "attrs"]
    assert result.column("location").to_pylist() == [
        {"city": "Oslo"},
        None,
        {"city": None},
        {"city": "B"},
    ]
    assert result.column("points").to_pylist() == [[{"x": 1}, None], None, [], [{"x": None}]]
    assert result.column("attrs").to_pylist() == [[("a", {"v": 1})], None, [("b", None)], []]
    assert result.schema == scan_arrow_schema(
        select_schema(NESTED, ["points.element.x", "attrs.value.v", "location.city"])
    )


# --- bad files ---------------------------------------------------------------------------------


def test_avro_file_without_field_ids_is_refused_naming_it(tmp_path: Path) -> None:
    table = FormatTable(tmp_path, BASE)
    path = str(tmp_path / "data" / "plain.avro")
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]}
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), [{"id": 1}])
    size = Path(path).stat().st_size
    table.commit([data_file(path, records=1, size=size, file_format="AVRO")])
    with pytest.raises(InvalidDataError, match=r"plain\.avro.*field-id"):
        table.table().scan().to_arrow()


@pytest.mark.parametrize("file_format", ["ORC", "AVRO"])
def test_truncated_files_name_the_file(file_format: str, tmp_path: Path) -> None:
    table = FormatTable(tmp_path, BASE)
    written = table.write(file_format, _base_rows(50))
    table.commit([written])
    path = Path(written["file_path"])
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(InvalidDataError, match=path.name.replace(".", r"\.")):
        table.table().scan().to_arrow()


def test_orc_column_that_does_not_fit_its_attributes_names_the_file(tmp_path: Path) -> None:
    schema = Schema(t.required(1, "id", t.LongType()), t.optional(2, "u", t.UUIDType()))
    table = FormatTable(tmp_path, schema)
    path = str(tmp_path / "data" / "bad.orc")
    arrow = pa.schema(
        [
            pa.field("id", pa.int64(), metadata={b"iceberg.id": b"1"}),
            pa.field(
                "u", pa.binary(), metadata={b"iceberg.id": b"2", b"iceberg.binary-type": b"UUID"}
            ),
        ]
    )
    orc.write_table(pa.table({"id": [1], "u": [b"short"]}, schema=arrow), path)
    size = Path(path).stat().st_size
    table.commit([data_file(path, records=1, size=size, file_format="ORC")])
    with pytest.raises(InvalidDataError, match=r"bad\.orc"):
        table.table().scan().to_arrow()


def test_orc_stripes_from_the_footer(tmp_path: Path) -> None:
    path = tmp_path / "s.orc"
    orc.write_table(pa.table({"a": list(range(20000))}), str(path), stripe_size=1024)
    reader = orc.ORCFile(str(path))
    stripes = orc_stripes(reader.reader.serialized_file_tail())
    assert len(stripes) == reader.nstripes > 1
    assert sum(rows for _, rows, _ in stripes) == 20000
    assert stripes[0][0] == 3  # right after the "ORC" magic
    # Each stripe ends where the next starts.
    for (offset, _, size), (following, _, _) in itertools.pairwise(stripes):
        assert offset + size == following


# --- delete files in ORC and Avro ---------------------------------------------------------------


def _position_delete_file(
    table: FormatTable, file_format: str, deletes: list[tuple[str, int]]
) -> dict[str, Any]:
    """A position delete file as Java writes it (reserved ids: no frazil Schema holds them)."""
    path = str(table.writer.path(f"pd.{file_format.lower()}"))
    rows = {"file_path": [p for p, _ in deletes], "pos": [n for _, n in deletes]}
    if file_format == "ORC":
        arrow = pa.schema(
            [
                pa.field("file_path", pa.string(), False, {b"iceberg.id": b"2147483546"}),
                pa.field("pos", pa.int64(), False, {b"iceberg.id": b"2147483545"}),
            ]
        )
        orc.write_table(pa.table(rows, schema=arrow), path)
    else:
        schema = {
            "type": "record",
            "name": "delete",
            "fields": [
                {"name": "file_path", "type": "string", "field-id": 2147483546},
                {"name": "pos", "type": "long", "field-id": 2147483545},
            ],
        }
        with open(path, "wb") as out:
            records = [{"file_path": p, "pos": n} for p, n in deletes]
            fastavro.writer(out, fastavro.parse_schema(schema), records)
    size = Path(path).stat().st_size
    return data_file(path, records=len(deletes), size=size, content=1, file_format=file_format)


@pytest.mark.parametrize("delete_format", ["ORC", "AVRO"])
def test_delete_files_in_orc_and_avro(delete_format: str, tmp_path: Path) -> None:
    # Java writes a table's delete files in its default format (write.delete.format.default).
    table = FormatTable(tmp_path, BASE)
    written = table.write(delete_format, _base_rows(30))
    table.commit([written])
    path = written["file_path"]
    positions = _position_delete_file(
        table, delete_format, [(path, 2), (path, 17), ("elsewhere.parquet", 3)]
    )
    equality = table.write(delete_format, {"id": [5, 6, 99]}, Schema(BASE.fields[0]))
    table.commit(
        deletes=[
            positions,
            {**equality, "content": 2, "equality_ids": [1]},
        ]
    )
    loaded = table.table()
    assert {str(d.file_format) for t in loaded.scan().plan_files() for d in t.delete_files} == {
        delete_format
    }
    ids = loaded.scan().to_arrow().column("id").to_pylist()
    assert ids == [i for i in range(30) if i not in (2, 17, 5, 6)]


@pytest.mark.parametrize("file_format", ["ORC", "AVRO"])
def test_reordered_columns_of_types_orc_lacks(file_format: str, tmp_path: Path) -> None:
    # uuid, fixed and time are ORC binaries and longs with attributes: cast after reading,
    # whatever order the columns are asked for in.
    schema = Schema(
        t.required(1, "id", t.LongType()),
        t.optional(2, "u", t.UUIDType()),
        t.optional(3, "tm", t.TimeType()),
        t.optional(4, "fx", t.FixedType(2)),
    )
    table = FormatTable(tmp_path, schema)
    rows = {
        "id": [1, 2],
        "u": [bytes(range(16)), None],
        "tm": [dt.time(23, 59, 59, 999999), None],
        "fx": [None, b"ab"],
    }
    table.commit([table.write(file_format, rows)])
    table.evolve(Schema(*reversed(schema.fields), schema_id=1))
    result = table.table().scan().to_arrow()
    assert result.column_names == ["fx", "tm", "u", "id"]
    # uuid reads as pa.uuid() (issue 22): its values are uuid.UUID.
    expected = dict(rows, u=[uuid.UUID(bytes=bytes(range(16))), None])
    assert result.to_pydict() == {name: expected[name] for name in result.column_names}


@pytest.mark.parametrize("file_format", FORMATS)
def test_reads_that_need_no_column_of_the_file_keep_every_row(
    file_format: str, tmp_path: Path
) -> None:
    # count() with deletes reads no column at all, and a column added after the file was
    # written is none of its columns: pyarrow's ORC reader gave no rows for a stripe read
    # without columns (every row of the file was lost without an error).
    schema = Schema(t.required(1, "id", t.LongType()), t.optional(2, "v", t.StringType()))
    table = FormatTable(tmp_path, schema)
    written = table.write(file_format, {"id": list(range(30)), "v": [str(i) for i in range(30)]})
    table.commit([written])
    table.commit(deletes=[table.position_deletes([(written["file_path"], 4)])])
    table.evolve(Schema(*schema.fields, t.optional(3, "added", t.StringType()), schema_id=1))
    loaded = table.table()
    assert loaded.scan().count() == 29
    added = loaded.scan(selected_fields=("added",)).to_arrow()
    assert added.column("added").to_pylist() == [None] * 29
