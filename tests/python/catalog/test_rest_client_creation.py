"""creation_updates: the updates a REST create transaction sends (with assert-create) rebuild
the staged table's metadata from nothing, as the server builds it (Java's buildFromEmpty;
frazil's apply_updates_from_empty), whatever its columns, partitioning, sort order, properties
and format version."""

from __future__ import annotations

import pyarrow as pa
import pytest
from frazil.catalog.rest.catalog import creation_updates
from frazil.errors import ValidationError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.sorting import SortField, SortOrder
from frazil.table._apply import apply_updates_from_empty
from frazil.table._arrow_schema import schema_from_arrow
from frazil.table.create import new_table_metadata
from hypothesis import given
from hypothesis import strategies as st

TYPES = [pa.int32(), pa.int64(), pa.string(), pa.date32(), pa.timestamp("us", "UTC"), pa.float64()]


@st.composite
def tables(
    draw: st.DrawFn,
) -> tuple[pa.Schema, list[tuple[str, str]], list[str], dict[str, str], int]:
    count = draw(st.integers(1, 6))
    types = draw(st.lists(st.sampled_from(TYPES), min_size=count, max_size=count))
    arrow = pa.schema(
        [pa.field(f"c{i}", t, nullable=draw(st.booleans())) for i, t in enumerate(types)]
    )
    partition: list[tuple[str, str]] = []
    for i, t in enumerate(types):
        if draw(st.booleans()):
            choices = ["identity"] if t == pa.float64() else ["identity", "bucket[4]"]
            if t in (pa.date32(), pa.timestamp("us", "UTC")):
                choices += ["day", "month", "year"]
            partition.append((f"c{i}", draw(st.sampled_from(choices))))
    order = draw(
        st.lists(st.sampled_from([f"c{i}" for i in range(count)]), unique=True, max_size=2)
    )
    properties = draw(
        st.dictionaries(
            st.sampled_from(["owner", "comment", "write.target-file-size-bytes"]),
            st.sampled_from(["1", "x"]),
        )
    )
    if "write.target-file-size-bytes" in properties:
        properties["write.target-file-size-bytes"] = "1048576"
    return arrow, partition, order, properties, draw(st.integers(1, 3))


@given(tables())
def test_creation_updates_rebuild_the_staged_metadata(
    table: tuple[pa.Schema, list[tuple[str, str]], list[str], dict[str, str], int],
) -> None:
    arrow, partition, order, properties, version = table
    schema = schema_from_arrow(arrow)
    spec = PartitionSpec(
        0,
        tuple(
            PartitionField(schema.field(column).field_id, 1000 + n, t, f"p{n}")
            for n, (column, t) in enumerate(partition)
        ),
    )
    sort = (
        SortOrder(
            1,
            tuple(SortField(schema.field(c).field_id) for c in order),
        )
        if order
        else None
    )
    staged = new_table_metadata(schema, "/warehouse/db/t", spec, sort, properties, version)
    rebuilt = apply_updates_from_empty(
        creation_updates(staged), timestamp_ms=staged.last_updated_ms
    )
    assert rebuilt.format_version == staged.format_version
    assert rebuilt.table_uuid == staged.table_uuid and rebuilt.location == staged.location
    assert (
        rebuilt.schemas == staged.schemas and rebuilt.current_schema_id == staged.current_schema_id
    )
    assert rebuilt.partition_specs == staged.partition_specs
    assert rebuilt.default_spec_id == staged.default_spec_id
    assert rebuilt.last_partition_id == staged.last_partition_id
    assert rebuilt.sort_orders == staged.sort_orders
    assert rebuilt.default_sort_order_id == staged.default_sort_order_id
    assert rebuilt.last_column_id == staged.last_column_id
    assert dict(rebuilt.properties) == dict(staged.properties)


def test_creation_updates_refuse_a_table_with_snapshots(tmp_path: object) -> None:
    from pathlib import Path

    from frazil.catalog.memory import InMemoryCatalog

    catalog = InMemoryCatalog(warehouse=str(Path(str(tmp_path))))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1]}))
    with pytest.raises(ValidationError, match="without snapshots"):
        creation_updates(table.metadata)
