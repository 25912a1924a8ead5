"""Random sequences of appends, overwrites, deletes and column additions on a table read back
equal to the same operations applied to an in-memory pyarrow table (hypothesis)."""

from __future__ import annotations

import tempfile
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from frazil.catalog.memory import InMemoryCatalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.types import NestedField, parse_type
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_values = st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=0, max_size=6)
_filters = st.tuples(st.sampled_from(["<", ">=", "="]), st.integers(-20, 20))
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), _values),
        st.tuples(st.just("delete"), _filters),
        st.tuples(st.just("overwrite"), st.tuples(_filters, _values)),
        st.tuples(st.just("add_column"), st.none()),
        st.tuples(st.just("expire"), st.integers(1, 3)),
    ),
    min_size=1,
    max_size=6,
)


def _mask(model: pa.Table, op: str, value: int) -> pa.Array:
    column = model.column("v")
    compare = {"<": pc.less, ">=": pc.greater_equal, "=": pc.equal}[op]
    # A null matches no comparison: the row is kept.
    return pc.fill_null(compare(column, value), False)


def _batch(model: pa.Table, values: list[int | None], start: int) -> pa.Table:
    columns: dict[str, Any] = {
        "id": pa.array(range(start, start + len(values)), pa.int64()),
        "v": pa.array(values, pa.int64()),
    }
    for name in model.column_names[2:]:
        columns[name] = pa.array([start] * len(values), pa.int32())
    return pa.table(columns)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=_ops, partitioned=st.booleans(), version=st.sampled_from([1, 2, 3]))
def test_operations_match_a_pyarrow_model(
    ops: list[tuple[str, Any]], partitioned: bool, version: int
) -> None:
    with tempfile.TemporaryDirectory() as warehouse:
        catalog = InMemoryCatalog(warehouse=warehouse)
        catalog.create_namespace("db")
        schema = Schema(
            NestedField(1, "id", parse_type("long"), False),
            NestedField(2, "v", parse_type("long"), False),
        )
        spec = (
            PartitionSpec(0, (PartitionField(2, 1000, "bucket[2]", "v_bucket"),))
            if partitioned
            else None
        )
        table = catalog.create_table(
            "db.t",
            schema,
            partition_spec=spec,
            format_version=version,
            properties={"commit.manifest.min-count-to-merge": "2"},
        )
        model = _batch(pa.table({"id": [], "v": []}), [], 0)
        next_id = 0
        for op, arg in ops:
            if op == "append":
                rows = _batch(model, arg, next_id)
                next_id += len(arg)
                table.append(rows)
                model = pa.concat_tables([model, rows])
            elif op == "delete":
                kind, value = arg
                table.delete(f"v {kind} {value}")
                model = model.filter(pc.invert(_mask(model, kind, value)))
            elif op == "overwrite":
                (kind, value), values = arg
                rows = _batch(model, values, next_id)
                next_id += len(values)
                table.overwrite(rows, f"v {kind} {value}")
                model = pa.concat_tables([model.filter(pc.invert(_mask(model, kind, value))), rows])
            elif op == "expire":
                # Every snapshot but the last ``arg`` goes, with the files only they reach;
                # the current rows must not change.
                table.expire_snapshots(older_than=int(time.time() * 1000) + 1000, retain_last=arg)
                assert len(table.snapshots()) <= arg
            else:
                name = f"c{len(model.column_names)}"
                with table.update_schema() as update:
                    update.add_column(name, "int")
                model = model.append_column(name, pa.nulls(model.num_rows, pa.int32()))
        got = table.scan().to_arrow().sort_by("id")
        expected = model.sort_by("id")
        assert got.column_names == expected.column_names
        for name in expected.column_names:
            assert got.column(name).to_pylist() == expected.column(name).to_pylist(), name
        if version >= 2 and table.current_snapshot() is not None:
            current = table.current_snapshot()
            assert current is not None
            assert table.metadata.last_sequence_number == current.sequence_number
