"""Partition spec evolution (UpdateSpec) and sort order replacement (UpdateSortOrder)."""

from __future__ import annotations

import pytest
from frazil import TableMetadata
from frazil.errors import InvalidTransformError, InvalidUpdateError, UnsupportedTransformError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table import (
    AddPartitionSpec,
    AddSortOrder,
    SetDefaultSortOrder,
    SetDefaultSpec,
    UpdateSortOrder,
    UpdateSpec,
    apply_updates,
)


def fields(spec: PartitionSpec) -> list[tuple[int, str, str, int]]:
    return [(f.field_id, f.name, f.transform, f.source_id) for f in spec.fields]


@pytest.mark.parametrize(
    "source, transform, name",
    [
        ("id", "identity", "id"),
        ("id", "bucket[16]", "id_bucket_16"),
        ("data", "truncate[4]", "data_trunc_4"),
        ("ts", "year", "ts_year"),
        ("ts", "month", "ts_month"),
        ("ts", "day", "ts_day"),
        ("ts", "hour", "ts_hour"),
        ("id", "void", "id_null"),
        ("location.lat", "identity", "location.lat"),
        ("location.lat", "void", "location.lat_null"),
        ("id", "BUCKET[8]", "id_bucket_8"),
    ],
)
def test_default_names_are_javas(v2: TableMetadata, source: str, transform: str, name: str) -> None:
    spec = UpdateSpec(v2).add_field(source, transform).apply()
    assert [f.name for f in spec.fields] == [name]


def test_v2_add_remove_and_reuse_ids(v2: TableMetadata) -> None:
    with UpdateSpec(v2) as first:
        first.add_field("id", "bucket[16]").add_field("ts", "day")
    m1 = first.metadata
    assert fields(m1.spec()) == [
        (1000, "id_bucket_16", "bucket[16]", 1),
        (1001, "ts_day", "day", 3),
    ]
    assert m1.last_partition_id == 1001 and m1.default_spec_id == 1
    with UpdateSpec(m1) as second:
        second.remove_field("ts_day").add_field("data", "truncate[2]")
    m2 = second.metadata
    # v2 drops the removed field; the new field gets the next id.
    assert fields(m2.spec()) == [
        (1000, "id_bucket_16", "bucket[16]", 1),
        (1002, "data_trunc_2", "truncate[2]", 2),
    ]
    with UpdateSpec(m2) as third:
        third.add_field("ts", "day")
    # Re-adding a field an earlier spec had reuses its id and name.
    assert fields(third.metadata.spec())[-1] == (1001, "ts_day", "day", 3)
    assert third.metadata.last_partition_id == 1002
    with UpdateSpec(m2) as named:
        named.add_field("ts", "day", name="event_day")
    # ... but only when the name matches, if one is given.
    assert fields(named.metadata.spec())[-1] == (1003, "event_day", "day", 3)


def test_v2_remove_and_re_add_in_one_update_is_no_change(v2: TableMetadata) -> None:
    m1 = UpdateSpec(v2).add_field("ts", "day").commit_to()
    update = UpdateSpec(m1).remove_field("ts_day").add_field("ts", "day")
    assert update.updates() == ()
    renamed = UpdateSpec(m1).remove_field("ts_day").add_field("ts", "day", name="d").apply()
    assert fields(renamed) == [(1000, "d", "day", 3)]


def test_v1_removed_fields_become_void(v1: TableMetadata) -> None:
    m1 = UpdateSpec(v1).add_field("id", "bucket[16]").add_field("ts", "day").commit_to()
    m2 = UpdateSpec(m1).remove_field("ts_day").commit_to()
    assert fields(m2.spec()) == [
        (1000, "id_bucket_16", "bucket[16]", 1),
        (1001, "ts_day", "void", 3),
    ]
    m3 = UpdateSpec(m2).add_field("ts", "day").commit_to()
    # No id reuse in v1: the void field keeps its id under a new name, the new field goes last.
    assert fields(m3.spec()) == [
        (1000, "id_bucket_16", "bucket[16]", 1),
        (1001, "ts_day_1001", "void", 3),
        (1002, "ts_day", "day", 3),
    ]
    assert TableMetadata.from_json(m3.to_json()) == m3


def test_v1_removed_field_can_be_renamed_and_reused_name(v1: TableMetadata) -> None:
    m1 = UpdateSpec(v1).add_field("id", "identity", "p").commit_to()
    m2 = UpdateSpec(m1).remove_field("p").commit_to()
    m3 = UpdateSpec(m2).rename_field("p", "old").commit_to()
    assert fields(m3.spec()) == [(1000, "old", "void", 1)]


def test_rename_field(v2: TableMetadata) -> None:
    m1 = UpdateSpec(v2).add_field("id", "bucket[16]").commit_to()
    m2 = UpdateSpec(m1).rename_field("id_bucket_16", "shard").commit_to()
    assert fields(m2.spec()) == [(1000, "shard", "bucket[16]", 1)]
    assert m2.last_partition_id == 1000


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda u: u.add_field("nope", "identity"), InvalidUpdateError, "no such column"),
        (
            lambda u: u.add_field("data", "day"),
            UnsupportedTransformError,
            "cannot be applied to string",
        ),
        (lambda u: u.add_field("id", "bucket[0]"), InvalidTransformError, "bucket"),
        (lambda u: u.add_field("id", "zorder"), InvalidUpdateError, "unknown transform 'zorder'"),
        (lambda u: u.add_field("location", "identity"), InvalidUpdateError, "not a primitive"),
        (lambda u: u.add_field("points.x", "identity"), InvalidUpdateError, "inside a list or map"),
        (lambda u: u.add_field("id").add_field("id"), InvalidUpdateError, "already added"),
        (
            lambda u: u.add_field("id", name="p").add_field("data", name="p"),
            InvalidUpdateError,
            "twice",
        ),
        (
            lambda u: u.add_field("ts", "day").add_field("ts", "hour"),
            InvalidUpdateError,
            "redundant partition field 'ts_hour'",
        ),
        (lambda u: u.remove_field("nope"), InvalidUpdateError, "no such field"),
        (lambda u: u.rename_field("nope", "x"), InvalidUpdateError, "no such field"),
        (lambda u: u.add_field("id").remove_field("id"), InvalidUpdateError, "it is being added"),
        (lambda u: u.add_field("id").rename_field("id", "x"), InvalidUpdateError, "being added"),
        (
            lambda u: u.add_field("data", name="id"),
            InvalidUpdateError,
            "column of the schema other than its source",
        ),
    ],
)
def test_spec_refusals(v2: TableMetadata, call: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(UpdateSpec(v2)).apply()  # type: ignore[operator]


def test_spec_refusals_on_existing_fields(v2: TableMetadata) -> None:
    m1 = UpdateSpec(v2).add_field("id", "bucket[16]").add_field("ts", "day").commit_to()
    with pytest.raises(InvalidUpdateError, match="duplicates existing field 'id_bucket_16'"):
        UpdateSpec(m1).add_field("id", "bucket[16]", name="other")
    with pytest.raises(InvalidUpdateError, match="already has a field of that name"):
        UpdateSpec(m1).add_field("data", "identity", name="ts_day")
    with pytest.raises(InvalidUpdateError, match="rename and remove"):
        UpdateSpec(m1).rename_field("ts_day", "d").remove_field("ts_day")
    with pytest.raises(InvalidUpdateError, match="remove and rename"):
        UpdateSpec(m1).remove_field("ts_day").rename_field("ts_day", "d")
    with pytest.raises(InvalidUpdateError, match="two fields named 'ts_day'"):
        UpdateSpec(m1).rename_field("id_bucket_16", "ts_day").apply()
    # A time transform next to an existing one of another granularity is allowed (as Java).
    assert len(UpdateSpec(m1).add_field("ts", "hour").apply().fields) == 3


def test_unknown_transform_in_the_current_spec_is_refused(v2: TableMetadata) -> None:
    spec = PartitionSpec(1, (PartitionField(1, 1000, "zorder", "z"),))
    metadata = v2.replace(
        partition_specs=(*v2.partition_specs, spec), default_spec_id=1, last_partition_id=1000
    )
    with pytest.raises(InvalidUpdateError, match="unknown transform 'zorder'"):
        UpdateSpec(metadata)


def test_spec_updates_reuse_an_earlier_spec(v2: TableMetadata) -> None:
    update = UpdateSpec(v2).add_field("id", "bucket[4]")
    assert update.updates() == (AddPartitionSpec(update.apply()), SetDefaultSpec(-1))
    m1 = update.commit_to()
    back = UpdateSpec(m1).remove_field("id_bucket_4")
    assert back.updates() == (SetDefaultSpec(0),)
    assert back.commit_to().default_spec_id == 0
    assert UpdateSpec(v2).updates() == ()


def test_case_insensitive_source(v2: TableMetadata) -> None:
    spec = UpdateSpec(v2, case_sensitive=False).add_field("ID", "bucket[2]").apply()
    assert fields(spec) == [(1000, "id_bucket_2", "bucket[2]", 1)]
    with pytest.raises(InvalidUpdateError, match="no such column"):
        UpdateSpec(v2).add_field("ID")


def test_spec_survives_column_rename(v2: TableMetadata) -> None:
    from frazil.table import UpdateSchema

    m1 = UpdateSpec(v2).add_field("ts", "day").commit_to()
    m2 = UpdateSchema(m1).rename_column("ts", "event_time").commit_to()
    assert fields(m2.spec()) == [(1000, "ts_day", "day", 3)]
    # New default names use the new column name.
    assert (
        UpdateSpec(m2).add_field("event_time", "hour").apply().fields[-1].name == "event_time_hour"
    )


# --- sort orders --------------------------------------------------------------------------------


def test_sort_order_replace(v2: TableMetadata) -> None:
    with UpdateSortOrder(v2) as update:
        update.asc("id", transform="bucket[4]").desc("ts", transform="day")
        update.asc("data", null_order=NullOrder.NULLS_LAST)
    order = update.metadata.sort_order()
    assert order.order_id == 1
    assert order.fields == (
        SortField(1, "bucket[4]", SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(3, "day", SortDirection.DESC, NullOrder.NULLS_LAST),
        SortField(2, "identity", SortDirection.ASC, NullOrder.NULLS_LAST),
    )
    assert update.updates() == (AddSortOrder(update.apply()), SetDefaultSortOrder(-1))
    # Replacing with an equal order reuses it; with nothing, the table becomes unsorted.
    again = UpdateSortOrder(update.metadata).asc("id", "bucket[4]").desc("ts", "day")
    assert again.asc("data", null_order="nulls-last").updates() == ()
    unsorted = UpdateSortOrder(update.metadata)
    assert unsorted.updates() == (SetDefaultSortOrder(0),)
    assert unsorted.commit_to().sort_order().is_unsorted()
    other = UpdateSortOrder(update.metadata).desc("id").commit_to()
    assert other.default_sort_order_id == 2 and len(other.sort_orders) == 3
    assert TableMetadata.from_json(other.to_json()) == other


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda u: u.asc("nope"), InvalidUpdateError, "no such column"),
        (lambda u: u.asc("location"), InvalidUpdateError, "not a primitive"),
        (lambda u: u.desc("data", "day"), UnsupportedTransformError, "cannot be applied"),
        (lambda u: u.asc("id", "bucket[0]"), InvalidTransformError, "bucket"),
        (lambda u: u.asc("id", "zorder"), InvalidUpdateError, "unknown transform"),
        (lambda u: u.asc("id", "bucket[-1]"), InvalidTransformError, "bucket"),
        (lambda u: u.asc("id", null_order="nulls-middle"), Exception, "nulls-middle"),
    ],
)
def test_sort_order_refusals(v2: TableMetadata, call: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(UpdateSortOrder(v2))  # type: ignore[operator]


def test_sort_order_ids_skip_existing(v2: TableMetadata) -> None:
    order = SortOrder(7, (SortField(2),))
    metadata = apply_updates(v2, [AddSortOrder(order)])
    assert [o.order_id for o in metadata.sort_orders] == [0, 1]
    assert UpdateSortOrder(metadata).desc("id").commit_to().default_sort_order_id == 2


def test_dropping_a_partition_or_sort_source_column(v2: TableMetadata) -> None:
    from frazil.errors import InvalidMetadataError
    from frazil.table import UpdateSchema

    partitioned = UpdateSpec(v2).add_field("data", "truncate[2]").commit_to()
    with pytest.raises(InvalidMetadataError, match="cannot find source column 2"):
        UpdateSchema(partitioned).delete_column("data").commit_to()
    # Once no longer partitioned by it (v2 drops the field), the column may go; the old spec
    # still names it, which the spec allows.
    unpartitioned = UpdateSpec(partitioned).remove_field("data_trunc_2").commit_to()
    dropped = UpdateSchema(unpartitioned).delete_column("data").commit_to()
    assert dropped.schema().find_field("data") is None
    assert TableMetadata.from_json(dropped.to_json()) == dropped
    sorted_by = UpdateSortOrder(v2).asc("data").commit_to()
    with pytest.raises(InvalidMetadataError, match="cannot find source column 2"):
        UpdateSchema(sorted_by).delete_column("data").commit_to()
