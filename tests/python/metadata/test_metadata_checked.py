"""Every public dataclass of the model refuses a value of the wrong type in any field, at
construction (issue 22: ``PartitionSpec(PartitionField(...))`` stored the field in ``spec_id``
and created an unpartitioned table)."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import typing
from collections.abc import Callable, Mapping
from types import MappingProxyType, UnionType
from typing import Any

import pytest
from frazil.errors import FrazilError, InvalidMetadataError, InvalidSchemaError
from frazil.manifest import DataFile, ManifestEntry, ManifestFile, PartitionFieldSummary
from frazil.metadata import TableMetadata
from frazil.name_mapping import MappedField, NameMapping
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from frazil.table import requirements, updates, view_updates
from frazil.transforms import Transform
from frazil.types import (
    DecimalType,
    FixedType,
    GeographyType,
    GeometryType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)
from frazil.view import (
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)
from hypothesis import given
from hypothesis import strategies as st

MODEL_MODULES = (
    "frazil.types",
    "frazil.schema",
    "frazil.partitioning",
    "frazil.sorting",
    "frazil.snapshots",
    "frazil.statistics",
    "frazil.name_mapping",
    "frazil.metadata",
    "frazil.view",
    "frazil.manifest",
)
# Table and view updates and requirements check their fields too (raising InvalidUpdateError).
UPDATE_MODULES = ("frazil.table.updates", "frazil.table.requirements", "frazil.table.view_updates")


def _public_dataclasses(modules: tuple[str, ...]) -> list[type]:
    found = []
    for name in modules:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            cls = getattr(module, attr)
            if (
                isinstance(cls, type)
                and dataclasses.is_dataclass(cls)
                and any(f.init for f in dataclasses.fields(cls))
            ):
                found.append(cls)
    return found


SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestamptzType()),
    identifier_field_ids=(1,),
)
SNAPSHOT = Snapshot(7, 1_700_000_000_000, None, 1, "s3://b/t/metadata/snap-7.avro", None, {})
DATA_FILE = DataFile(
    content=0,
    file_path="s3://b/t/data/a.parquet",
    file_format="PARQUET",
    partition={"ts_day": 19000},
    record_count=10,
    file_size_in_bytes=1000,
    column_sizes={1: 10},
    value_counts={1: 10},
    null_value_counts={1: 0},
    nan_value_counts={},
    lower_bounds={1: b"\x00" * 8},
    upper_bounds={1: b"\x09" + b"\x00" * 7},
    key_metadata=None,
    split_offsets=[4],
    equality_ids=None,
    sort_order_id=0,
    first_row_id=None,
    referenced_data_file=None,
    content_offset=None,
    content_size_in_bytes=None,
)
VERSION = ViewVersion(
    version_id=1,
    timestamp_ms=1,
    schema_id=0,
    summary={"engine": "x"},
    representations=(SQLViewRepresentation("select 1", "spark"),),
    default_namespace=("db",),
)

# One valid value of each class; every public dataclass must have one.
SAMPLES: dict[type, Callable[[], Any]] = {
    DecimalType: lambda: DecimalType(9, 2),
    FixedType: lambda: FixedType(16),
    GeometryType: lambda: GeometryType(),
    GeographyType: lambda: GeographyType(),
    NestedField: lambda: NestedField(1, "id", LongType(), True, "doc"),
    StructType: lambda: StructType((NestedField(1, "a", LongType()),)),
    ListType: lambda: ListType(3, StringType(), True),
    MapType: lambda: MapType(4, StringType(), 5, LongType()),
    Schema: lambda: SCHEMA,
    PartitionField: lambda: PartitionField(2, 1000, "day", "ts_day"),
    PartitionSpec: lambda: PartitionSpec(PartitionField(2, 1000, "day", "ts_day"), spec_id=1),
    SortField: lambda: SortField(1, "identity", SortDirection.DESC, NullOrder.NULLS_LAST),
    SortOrder: lambda: SortOrder(SortField(1), order_id=2),
    Snapshot: lambda: SNAPSHOT,
    SnapshotRef: lambda: SnapshotRef.branch(7, min_snapshots_to_keep=1),
    SnapshotLogEntry: lambda: SnapshotLogEntry(1, 7),
    MetadataLogEntry: lambda: MetadataLogEntry(1, "s3://b/t/metadata/v1.metadata.json"),
    BlobMetadata: lambda: BlobMetadata("apache-datasketches-theta-v1", 7, 1, (1,), {"a": "b"}),
    StatisticsFile: lambda: StatisticsFile(
        7, "s3://b/t/s.puffin", 10, 5, (BlobMetadata("t", 7, 1, (1,)),)
    ),
    PartitionStatisticsFile: lambda: PartitionStatisticsFile(7, "s3://b/t/p.parquet", 10),
    MappedField: lambda: MappedField(("a",), 1, (MappedField(("b",), 2),)),
    NameMapping: lambda: NameMapping((MappedField(("a",), 1),)),
    TableMetadata: lambda: TableMetadata.new(
        SCHEMA,
        "s3://b/t",
        spec=PartitionSpec(PartitionField(2, 1000, "day", "ts_day")),
        properties={"k": "v"},
        table_uuid="9c12d441-03fe-4693-9a96-a0705ddf69c1",
    ).replace(snapshots=(SNAPSHOT,), last_sequence_number=1),
    SQLViewRepresentation: lambda: SQLViewRepresentation("select 1", "spark"),
    UnknownViewRepresentation: lambda: UnknownViewRepresentation("x", {"k": 1}),
    ViewVersion: lambda: VERSION,
    ViewHistoryEntry: lambda: ViewHistoryEntry(1, 1),
    ViewMetadata: lambda: ViewMetadata(
        view_uuid="9c12d441-03fe-4693-9a96-a0705ddf69c1",
        location="s3://b/v",
        current_version_id=1,
        versions=(VERSION,),
        schemas=(SCHEMA,),
    ),
    PartitionFieldSummary: lambda: PartitionFieldSummary(False, None, b"a", b"b"),
    ManifestFile: lambda: ManifestFile(
        "s3://b/t/m.avro",
        100,
        0,
        0,
        1,
        1,
        7,
        1,
        0,
        0,
        10,
        0,
        0,
        [PartitionFieldSummary(False, False, b"a", b"b")],
        None,
        None,
    ),
    DataFile: lambda: DATA_FILE,
    ManifestEntry: lambda: ManifestEntry(1, 7, 1, 1, DATA_FILE),
}
UPDATE_SAMPLES: dict[type, Callable[[], Any]] = {
    updates.AssignUUID: lambda: updates.AssignUUID("9c12d441-03fe-4693-9a96-a0705ddf69c1"),
    updates.UpgradeFormatVersion: lambda: updates.UpgradeFormatVersion(3),
    updates.AddSchema: lambda: updates.AddSchema(SCHEMA, 2),
    updates.SetCurrentSchema: lambda: updates.SetCurrentSchema(0),
    updates.AddPartitionSpec: lambda: updates.AddPartitionSpec(PartitionSpec()),
    updates.SetDefaultSpec: lambda: updates.SetDefaultSpec(0),
    updates.AddSortOrder: lambda: updates.AddSortOrder(SortOrder()),
    updates.SetDefaultSortOrder: lambda: updates.SetDefaultSortOrder(0),
    updates.AddSnapshot: lambda: updates.AddSnapshot(SNAPSHOT),
    updates.SetSnapshotRef: lambda: updates.SetSnapshotRef("main", 7),
    updates.RemoveSnapshots: lambda: updates.RemoveSnapshots((7,)),
    updates.RemoveSnapshotRef: lambda: updates.RemoveSnapshotRef("b"),
    updates.SetLocation: lambda: updates.SetLocation("s3://b/t2"),
    updates.SetProperties: lambda: updates.SetProperties({"a": "b"}),
    updates.RemoveProperties: lambda: updates.RemoveProperties(("a",)),
    updates.SetStatistics: lambda: updates.SetStatistics(SAMPLES[StatisticsFile]()),
    updates.RemoveStatistics: lambda: updates.RemoveStatistics(7),
    updates.SetPartitionStatistics: lambda: updates.SetPartitionStatistics(
        SAMPLES[PartitionStatisticsFile]()
    ),
    updates.RemovePartitionStatistics: lambda: updates.RemovePartitionStatistics(7),
    updates.RemoveSchemas: lambda: updates.RemoveSchemas((0, 1)),
    updates.RemovePartitionSpecs: lambda: updates.RemovePartitionSpecs((0,)),
    requirements.AssertTableUUID: lambda: requirements.AssertTableUUID("u"),
    requirements.AssertRefSnapshotId: lambda: requirements.AssertRefSnapshotId("main", 7),
    requirements.AssertLastAssignedFieldId: lambda: requirements.AssertLastAssignedFieldId(2),
    requirements.AssertCurrentSchemaId: lambda: requirements.AssertCurrentSchemaId(0),
    requirements.AssertLastAssignedPartitionId: lambda: requirements.AssertLastAssignedPartitionId(
        999
    ),
    requirements.AssertDefaultSpecId: lambda: requirements.AssertDefaultSpecId(0),
    requirements.AssertDefaultSortOrderId: lambda: requirements.AssertDefaultSortOrderId(0),
    view_updates.AddViewVersion: lambda: view_updates.AddViewVersion(VERSION),
    view_updates.SetCurrentViewVersion: lambda: view_updates.SetCurrentViewVersion(1),
    view_updates.AssertViewUUID: lambda: view_updates.AssertViewUUID("u"),
}


class _Odd:
    """A value of no type any field takes."""

    def __repr__(self) -> str:
        return "<odd>"


ODD = _Odd()


def _wrong_values(hint: Any) -> list[Any]:
    """Values of the wrong type for an annotation: an object of no model type, and the near
    misses a caller makes (a bool or a string for an int, an int for a str, a string for a
    sequence, a container holding something of the wrong type)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, UnionType):
        inner = [a for a in args if a is not type(None)]
        candidates = [w for a in inner for w in _wrong_values(a)]
        # A value wrong for one member may be right for another (a str for str | None).
        return [w for w in candidates if not any(_accepts(a, w) for a in args)]
    if hint is int:
        return [ODD, True, "1", 1.5, None]
    if hint is bool:
        return [ODD, 1, "true", None]
    if hint in (str, bytes):
        return [ODD, 1, b"x" if hint is str else "x", None]
    if origin in (tuple, list):
        return [ODD, "abc", [ODD], (ODD,), None]
    if origin in (dict, Mapping):
        key, value = args
        wrong: list[Any] = [ODD, [("k", "v")], None]
        if key is not Any:
            wrong.append({ODD: _valid_of(value)})
        if value is not Any:
            wrong.append({_valid_of(key): ODD})
        return wrong
    return [ODD, "x", None]


def _valid_of(hint: Any) -> Any:
    return {int: 1, str: "k", bytes: b"k"}.get(hint, ODD)


def _accepts(hint: Any, value: Any) -> bool:
    """What the test considers right (the check's rules, written out plainly)."""
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin is not None:
        return False  # the wrong containers above are wrong for every container hint
    if isinstance(hint, type):
        # A str enum also takes its value as a string (checked by the class itself).
        return isinstance(value, hint)
    return False


def _cases(classes: list[type], samples: dict[type, Callable[[], Any]]) -> list[Any]:
    cases = []
    for cls in classes:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.init and hints[f.name] is not Any:
                cases.append(
                    pytest.param(cls, f.name, hints[f.name], id=f"{cls.__name__}.{f.name}")
                )
    return cases


MODEL_CLASSES = _public_dataclasses(MODEL_MODULES)
UPDATE_CLASSES = _public_dataclasses(UPDATE_MODULES)


def test_every_public_dataclass_is_checked_and_sampled() -> None:
    assert len(MODEL_CLASSES) >= 30
    for cls in MODEL_CLASSES:
        assert cls.__dict__.get("__frazil_checked__"), f"{cls.__name__} is not @checked"
        assert cls in SAMPLES, f"add a sample {cls.__name__} to SAMPLES"
        assert type(SAMPLES[cls]()) is cls
    for cls in UPDATE_CLASSES:
        assert cls in UPDATE_SAMPLES, f"add a sample {cls.__name__} to UPDATE_SAMPLES"


def _replace(sample: Any, name: str, value: Any) -> Any:
    return dataclasses.replace(sample, **{name: value})


@pytest.mark.parametrize("cls, name, hint", _cases(MODEL_CLASSES, SAMPLES))
def test_model_refuses_a_wrong_type_in_every_field(cls: type, name: str, hint: Any) -> None:
    sample = SAMPLES[cls]()
    assert _replace(sample, name, getattr(sample, name)) == sample  # the field itself is fine
    # Input forms the class converts itself (``also``: None for a SortField's null order).
    also = getattr(cls, "__frazil_also__", {}).get(name, ())
    for wrong in _wrong_values(hint):
        if type(wrong) in also and not isinstance(wrong, str):
            continue
        if isinstance(wrong, str) and isinstance(hint, type) and issubclass(hint, enum.Enum):
            # An enum field takes its value as a string; the class names the allowed values.
            with pytest.raises(InvalidMetadataError, match="'x'"):
                _replace(sample, name, wrong)
            continue
        with pytest.raises(InvalidMetadataError, match=rf"{cls.__name__}: {name}\b") as info:
            _replace(sample, name, wrong)
        assert "must be" in str(info.value)


@pytest.mark.parametrize("cls, name, hint", _cases(UPDATE_CLASSES, UPDATE_SAMPLES))
def test_updates_refuse_a_wrong_type_in_every_field(cls: type, name: str, hint: Any) -> None:
    sample = UPDATE_SAMPLES[cls]()
    for wrong in _wrong_values(hint):
        with pytest.raises(FrazilError):
            _replace(sample, name, wrong)


@given(st.lists(st.integers(min_value=1, max_value=10**6), min_size=1, max_size=5))
def test_containers_given_as_lists_or_mappings_are_stored_as_annotated(ids: list[int]) -> None:
    blob = BlobMetadata("t", 1, 1, ids, MappingProxyType({"a": "b"}))
    assert blob.fields == tuple(ids) and type(blob.fields) is tuple
    assert type(blob.properties) is dict and blob.properties == {"a": "b"}
    data = dataclasses.replace(DATA_FILE, split_offsets=tuple(ids))
    assert data.split_offsets == ids and type(data.split_offsets) is list
    with pytest.raises(InvalidMetadataError, match=r"split_offsets\[0\] must be an int"):
        dataclasses.replace(DATA_FILE, split_offsets=[str(ids[0]), *ids])


def test_the_error_names_the_element() -> None:
    with pytest.raises(InvalidSchemaError, match=r"Schema: fields\[1\] must be a NestedField"):
        Schema(NestedField(1, "a", LongType()), "b")  # type: ignore[arg-type]
    with pytest.raises(InvalidMetadataError, match=r"lower_bounds\[1\] must be bytes, got 'x'"):
        dataclasses.replace(DATA_FILE, lower_bounds={1: "x"})
    with pytest.raises(InvalidMetadataError, match=r"summary key 3 must be a str"):
        Snapshot(1, 2, summary={3: "x"})  # type: ignore[dict-item]
    with pytest.raises(InvalidMetadataError, match=r"NestedField: field_type must be an Iceb"):
        NestedField(1, "a", "long")  # type: ignore[arg-type]


# --- pyiceberg's constructors -----------------------------------------------------------------

DAY = PartitionField(source_id=2, field_id=1000, transform="day", name="ts_day")


def test_partition_spec_takes_pyicebergs_form() -> None:
    spec = PartitionSpec(DAY)
    assert spec.spec_id == 0 and spec.fields == (DAY,)
    assert PartitionSpec(DAY, DAY.__class__(1, 1001, "bucket[4]", "id_b"), spec_id=3).spec_id == 3
    assert PartitionSpec(fields=[DAY], spec_id=2) == PartitionSpec(2, (DAY,))  # frazil's form
    assert PartitionSpec() == PartitionSpec(0, ()) == PartitionSpec(spec_id=0)
    assert dataclasses.replace(spec, spec_id=5) == PartitionSpec(DAY, spec_id=5)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: PartitionSpec(spec_id="1"), r"spec_id must be an int, got '1'"),
        (lambda: PartitionSpec(spec_id=True), r"spec_id must be an int, got True"),
        (lambda: PartitionSpec(0, DAY), r"fields must be a tuple of PartitionField"),
        (lambda: PartitionSpec(DAY, 1), r"fields\[1\] must be a PartitionField, got 1"),
        (lambda: PartitionSpec(DAY, fields=[DAY]), "positionally or as fields=, not both"),
        (lambda: PartitionSpec(1, spec_id=2), "spec_id given twice"),
        (lambda: PartitionSpec(1, (), ()), "3 positional arguments"),
        (lambda: SortOrder(order_id="1"), r"order_id must be an int"),
        (lambda: SortOrder(SortField(1), 2), r"fields\[1\] must be a SortField, got 2"),
    ],
)
def test_partition_spec_and_sort_order_refuse_misplaced_arguments(
    make: Callable[[], Any], message: str
) -> None:
    with pytest.raises(InvalidMetadataError, match=message):
        make()


def test_sort_order_takes_pyicebergs_form() -> None:
    order = SortOrder(SortField(1), SortField(2, "day", "desc", "nulls-last"))
    assert order.order_id == 1  # pyiceberg's and Java's first order id
    assert [f.source_id for f in order.fields] == [1, 2]
    assert SortOrder(SortField(1), order_id=4).order_id == 4
    assert SortOrder(2, (SortField(1),)) == SortOrder(SortField(1), order_id=2)
    assert SortOrder().is_unsorted() and SortOrder().order_id == 0
    # A Transform is accepted where a transform string is expected, and stored as the string.
    assert SortField(1, Transform("bucket[4]")).transform == "bucket[4]"  # type: ignore[arg-type]
    assert PartitionField(1, 1000, Transform("day"), "d").transform == "day"  # type: ignore[arg-type]


def test_create_table_with_pyicebergs_partition_spec_is_partitioned(tmp_path: Any) -> None:
    import pyarrow as pa
    from frazil.catalog.sql import SqlCatalog

    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("db")
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", "UTC"))])
    table = catalog.create_table(
        "db.t",
        schema,
        partition_spec=PartitionSpec(
            PartitionField(source_id=2, field_id=1000, transform="day", name="ts_day")
        ),
        sort_order=SortOrder(SortField(1)),
    )
    assert [(f.source_id, f.transform, f.name) for f in table.spec().fields] == [
        (2, "day", "ts_day")
    ]
    assert [f.source_id for f in table.sort_order().fields] == [1]


def test_data_file_views_of_an_arrow_column_are_checked_once_for_the_column(
    tmp_path: Any,
) -> None:
    import pyarrow as pa
    from frazil.manifest import entries_table, manifest_entry_schema

    spec = {"spec-id": 0, "fields": [{"name": "ts_day", "transform": "day", "source-id": 2,
                                      "field-id": 1000}]}  # fmt: skip
    entries = entries_table(
        [{"status": 1, "snapshot_id": 7, "data_file": DATA_FILE.to_row()}] * 3,
        spec=spec,
        schema=SCHEMA.to_json(),
    )
    column = entries.column("data_file")
    assert column.type == manifest_entry_schema(spec, SCHEMA.to_json()).field("data_file").type
    views = DataFile.from_arrow(column)
    assert views == [DataFile.from_row(r) for r in column.to_pylist()]
    assert views[0].lower_bounds == DATA_FILE.lower_bounds
    assert views[0].split_offsets == DATA_FILE.split_offsets
    # A column whose Arrow type does not guarantee the fields' types is checked row by row.
    odd = pa.array([{"file_path": 3, "record_count": 1}])
    with pytest.raises(InvalidMetadataError, match="DataFile: file_path must be a str or None"):
        DataFile.from_arrow(odd)
    floats = pa.array([{"file_path": "x", "record_count": 1.5}])
    with pytest.raises(InvalidMetadataError, match="DataFile: record_count must be an int"):
        DataFile.from_arrow(floats)
