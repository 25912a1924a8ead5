"""Table metadata (spec: "Table Metadata", Appendix C, Appendix E) for format versions 1-3.

:class:`TableMetadata` is an immutable value. Build a changed copy with
``dataclasses.replace(metadata, ...)`` (or :meth:`TableMetadata.replace`);
every construction re-checks the rules listed in :meth:`TableMetadata._validate`,
so an instance is always valid metadata.

Reading follows Java's ``TableMetadataParser``: v1 metadata may carry only the
deprecated ``schema`` and ``partition-spec`` (and old partition fields without
ids, numbered from 1000), a missing ``last-sequence-number`` reads as 0 in v1,
missing sort orders as the unsorted order, missing ``refs`` as a ``main``
branch at the current snapshot. v2 and v3 metadata must have every field the
spec marks required. Unknown top-level fields are kept (``extras``) and written
back, as are all properties.

Writing follows Java as well: v1 writes the deprecated ``schema`` and
``partition-spec`` besides the lists, never ``last-sequence-number``; v3 writes
``next-row-id`` and a ``null`` current snapshot id where v1/v2 write ``-1``.

Example::

    metadata = frazil.read_metadata("file:///warehouse/db/t/metadata/v3.metadata.json")
    metadata.schema().find_field("location.lat")
    metadata.current_snapshot()
    changed = metadata.replace(properties={**metadata.properties, "owner": "me"})
    frazil.write_metadata(changed, "/warehouse/db/t/metadata/v4.metadata.json")
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import (
    FrazilError,
    InvalidMetadataError,
    TableUUIDMismatchError,
    UnsupportedFormatVersionError,
)
from frazil.io import IOLike, resolve
from frazil.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY, NameMapping
from frazil.partitioning import PARTITION_DATA_ID_START, PartitionSpec
from frazil.schema import Schema
from frazil.snapshots import (
    MAIN_BRANCH,
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
)
from frazil.sorting import SortOrder
from frazil.statistics import PartitionStatisticsFile, StatisticsFile

__all__ = [
    "SUPPORTED_FORMAT_VERSION",
    "TableMetadata",
    "check_same_table",
    "read_metadata",
    "write_metadata",
]

SUPPORTED_FORMAT_VERSION = 3

_KNOWN_FIELDS = frozenset(
    {
        "format-version",
        "table-uuid",
        "location",
        "last-sequence-number",
        "last-updated-ms",
        "last-column-id",
        "schema",
        "schemas",
        "current-schema-id",
        "partition-spec",
        "partition-specs",
        "default-spec-id",
        "last-partition-id",
        "properties",
        "current-snapshot-id",
        "snapshots",
        "snapshot-log",
        "metadata-log",
        "sort-orders",
        "default-sort-order-id",
        "refs",
        "statistics",
        "partition-statistics",
    }
)


def _unique(items: tuple[Any, ...], key: str, what: str, cls: type) -> dict[int, Any]:
    index: dict[int, Any] = {}
    for item in items:
        if not isinstance(item, cls):
            raise InvalidMetadataError(f"a {what} must be a {cls.__name__}, got {item!r}")
        item_id = getattr(item, key)
        if item_id in index:
            raise InvalidMetadataError(f"duplicate {what} id {item_id}")
        index[item_id] = item
    return index


@dataclass(frozen=True, kw_only=True)
@checked
class TableMetadata:
    """Table metadata. Attribute names are the spec's fields in snake_case.

    ``current_snapshot_id`` is None when the table has no current snapshot (JSON ``-1`` or
    ``null``). ``next_row_id`` is set for v3 only. ``extras`` holds unknown top-level fields
    (for instance ``encryption-keys``) as read. ``metadata_location`` is the file this was
    read from, if any; it is not part of the value (not compared), and a copy made with
    :meth:`replace` does not inherit it.
    """

    format_version: int = 2
    table_uuid: str | None = None
    location: str
    last_sequence_number: int = 0
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...] = (PartitionSpec(),)
    default_spec_id: int = 0
    last_partition_id: int = PARTITION_DATA_ID_START - 1
    properties: Mapping[str, str] = field(default_factory=dict)
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[SnapshotLogEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    sort_orders: tuple[SortOrder, ...] = (SortOrder(),)
    default_sort_order_id: int = 0
    refs: Mapping[str, SnapshotRef] = field(default_factory=dict)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    next_row_id: int | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    metadata_location: str | None = field(default=None, compare=False, init=False)

    def __post_init__(self) -> None:
        for name in (
            "schemas",
            "partition_specs",
            "snapshots",
            "snapshot_log",
            "metadata_log",
            "sort_orders",
            "statistics",
            "partition_statistics",
        ):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("properties", "refs", "extras"):
            object.__setattr__(self, name, dict(getattr(self, name)))
        self._validate()

    # --- validation -----------------------------------------------------------------------------

    def _validate(self) -> None:
        """The rules every table metadata must follow (spec: Table Metadata Fields; Java:
        TableMetadata's constructor)."""
        version = self.format_version
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidMetadataError(f"format-version must be an int, got {version!r}")
        _check_format_version(version)
        if version >= 2 and self.table_uuid is None:
            raise InvalidMetadataError(f"table-uuid is required in format v{version}")
        if version == 1 and self.last_sequence_number != 0:
            raise InvalidMetadataError(
                f"last-sequence-number must be 0 in format v1, got {self.last_sequence_number}"
            )
        if version >= 3 and self.next_row_id is None:
            raise InvalidMetadataError(f"next-row-id is required in format v{version}")
        if version < 3 and self.next_row_id is not None:
            raise InvalidMetadataError(f"next-row-id is a v3 field; this table is v{version}")

        schemas = _unique(self.schemas, "schema_id", "schema", Schema)
        if self.current_schema_id not in schemas:
            raise InvalidMetadataError(
                f"current-schema-id {self.current_schema_id} is not among the schemas "
                f"{sorted(schemas)}"
            )
        for schema in self.schemas:
            schema.check_format_version(version)
        current_schema = schemas[self.current_schema_id]

        specs = _unique(self.partition_specs, "spec_id", "partition spec", PartitionSpec)
        if self.default_spec_id not in specs:
            raise InvalidMetadataError(
                f"default-spec-id {self.default_spec_id} is not among the partition specs "
                f"{sorted(specs)}"
            )
        # Like Java, only the default spec and sort order must bind to the current schema:
        # older ones may name columns that were dropped since.
        specs[self.default_spec_id].check_compatible(current_schema)

        orders = _unique(self.sort_orders, "order_id", "sort order", SortOrder)
        if self.default_sort_order_id not in orders:
            raise InvalidMetadataError(
                f"default-sort-order-id {self.default_sort_order_id} is not among the sort "
                f"orders {sorted(orders)}"
            )
        orders[self.default_sort_order_id].check_compatible(current_schema)

        snapshots = _unique(self.snapshots, "snapshot_id", "snapshot", Snapshot)
        if version >= 2:
            for snapshot in self.snapshots:
                if snapshot.sequence_number > self.last_sequence_number:
                    raise InvalidMetadataError(
                        f"snapshot {snapshot.snapshot_id} has sequence number "
                        f"{snapshot.sequence_number}, above last-sequence-number "
                        f"{self.last_sequence_number}"
                    )
        if self.current_snapshot_id is not None and self.current_snapshot_id not in snapshots:
            raise InvalidMetadataError(
                f"current-snapshot-id {self.current_snapshot_id} is not among the snapshots"
            )
        for name, ref in self.refs.items():
            if not isinstance(ref, SnapshotRef):
                raise InvalidMetadataError(f"ref {name!r} must be a SnapshotRef, got {ref!r}")
            if ref.snapshot_id not in snapshots:
                raise InvalidMetadataError(
                    f"ref {name!r} points at snapshot {ref.snapshot_id}, which is not among the "
                    "snapshots"
                )
        main = self.refs.get(MAIN_BRANCH)
        if main is not None:
            if not main.is_branch:
                raise InvalidMetadataError("ref 'main' must be a branch, not a tag")
            if main.snapshot_id != self.current_snapshot_id:
                raise InvalidMetadataError(
                    f"current-snapshot-id {self.current_snapshot_id} does not match the 'main' "
                    f"branch, which points at snapshot {main.snapshot_id}"
                )
        _check_properties(self.properties)

    # --- convenience ----------------------------------------------------------------------------

    def replace(self, **changes: Any) -> TableMetadata:
        """A copy with ``changes`` applied (``dataclasses.replace``), validated again."""
        return dataclasses.replace(self, **changes)

    @property
    def schemas_by_id(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in self.schemas}

    @property
    def specs_by_id(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in self.partition_specs}

    @property
    def sort_orders_by_id(self) -> dict[int, SortOrder]:
        return {s.order_id: s for s in self.sort_orders}

    def schema(self) -> Schema:
        """The current schema."""
        return self.schemas_by_id[self.current_schema_id]

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return self.schemas_by_id.get(schema_id)

    def spec(self) -> PartitionSpec:
        """The default partition spec."""
        return self.specs_by_id[self.default_spec_id]

    def spec_by_id(self, spec_id: int) -> PartitionSpec | None:
        return self.specs_by_id.get(spec_id)

    def sort_order(self) -> SortOrder:
        """The default sort order."""
        return self.sort_orders_by_id[self.default_sort_order_id]

    def sort_order_by_id(self, order_id: int) -> SortOrder | None:
        return self.sort_orders_by_id.get(order_id)

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        return next((s for s in self.snapshots if s.snapshot_id == snapshot_id), None)

    def current_snapshot(self) -> Snapshot | None:
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def ref(self, name: str) -> SnapshotRef | None:
        return self.refs.get(name)

    def snapshot_by_name(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points at, or None."""
        ref = self.refs.get(name)
        return None if ref is None else self.snapshot_by_id(ref.snapshot_id)

    def name_mapping(self) -> NameMapping | None:
        """The ``schema.name-mapping.default`` property, parsed; None when unset."""
        text = self.properties.get(DEFAULT_NAME_MAPPING_PROPERTY)
        return None if text is None else NameMapping.from_json(text)

    def check_refreshed(self, refreshed: TableMetadata) -> TableMetadata:
        """``refreshed``, after checking it is the same table (see :func:`check_same_table`)."""
        return check_same_table(self, refreshed)

    @classmethod
    def new(
        cls,
        schema: Schema,
        location: str,
        *,
        spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int = 2,
        table_uuid: str | None = None,
        last_updated_ms: int | None = None,
    ) -> TableMetadata:
        """Metadata of a new, empty table with the given schema, spec and order as they are
        (ids are not reassigned)."""
        spec = spec if spec is not None else PartitionSpec()
        sort_order = sort_order if sort_order is not None else SortOrder()
        return cls(
            format_version=format_version,
            table_uuid=table_uuid if table_uuid is not None else str(uuid.uuid4()),
            location=location,
            last_updated_ms=last_updated_ms
            if last_updated_ms is not None
            else int(time.time() * 1000),
            last_column_id=schema.highest_field_id(),
            schemas=(schema,),
            current_schema_id=schema.schema_id,
            partition_specs=(spec,),
            default_spec_id=spec.spec_id,
            last_partition_id=spec.last_assigned_field_id,
            sort_orders=(sort_order,),
            default_sort_order_id=sort_order.order_id,
            properties=dict(properties or {}),
            next_row_id=0 if format_version >= 3 else None,
        )

    # --- JSON -----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON object Java's TableMetadataParser writes for this version, plus extras."""
        v = self.format_version
        out: dict[str, Any] = {"format-version": v, "table-uuid": self.table_uuid}
        out["location"] = self.location
        if v > 1:
            out["last-sequence-number"] = self.last_sequence_number
        out["last-updated-ms"] = self.last_updated_ms
        out["last-column-id"] = self.last_column_id
        if v == 1:
            # For old readers, v1 also writes the current schema as "schema".
            out["schema"] = self.schema().to_json()
        out["current-schema-id"] = self.current_schema_id
        out["schemas"] = [s.to_json() for s in self.schemas]
        if v == 1:
            out["partition-spec"] = self.spec().fields_to_json()
        out["default-spec-id"] = self.default_spec_id
        out["partition-specs"] = [s.to_json() for s in self.partition_specs]
        out["last-partition-id"] = self.last_partition_id
        out["default-sort-order-id"] = self.default_sort_order_id
        out["sort-orders"] = [s.to_json() for s in self.sort_orders]
        out["properties"] = dict(self.properties)
        if self.current_snapshot_id is not None:
            out["current-snapshot-id"] = self.current_snapshot_id
        else:
            out["current-snapshot-id"] = None if v >= 3 else -1
        if v >= 3:
            out["next-row-id"] = self.next_row_id
        out["refs"] = {name: ref.to_json() for name, ref in self.refs.items()}
        out["snapshots"] = [s.to_json() for s in self.snapshots]
        out["statistics"] = [s.to_json() for s in self.statistics]
        out["partition-statistics"] = [s.to_json() for s in self.partition_statistics]
        out["snapshot-log"] = [e.to_json() for e in self.snapshot_log]
        out["metadata-log"] = [e.to_json() for e in self.metadata_log]
        for key, value in self.extras.items():
            out.setdefault(key, value)
        return out

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(
        cls, text: str | bytes | Mapping[str, Any], metadata_location: str | None = None
    ) -> TableMetadata:
        """Read table metadata from JSON text (or an already parsed object)."""
        try:
            node = text if isinstance(text, Mapping) else js.parse_json(text, "table metadata")
            return _from_dict(js.as_object(node, "table metadata"), metadata_location)
        except FrazilError as error:
            if metadata_location is None:
                raise
            raise type(error)(f"{metadata_location}: {error}") from None
        except RecursionError:
            # Types nested thousands deep: the parsers recurse once per level.
            too_deep = js.too_deep("table metadata")
            if metadata_location is None:
                raise too_deep from None
            raise InvalidMetadataError(f"{metadata_location}: {too_deep}") from None


def _check_format_version(version: int) -> None:
    if version > SUPPORTED_FORMAT_VERSION:
        raise UnsupportedFormatVersionError(
            f"cannot read table format version {version}: frazil supports format versions up to "
            f"{SUPPORTED_FORMAT_VERSION}"
        )
    if version < 1:
        raise UnsupportedFormatVersionError(f"invalid table format version {version}")


def _check_properties(properties: Mapping[str, str]) -> None:
    for key, value in properties.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidMetadataError(
                f"table properties must map strings to strings, got {key!r}: {value!r}"
            )


def _from_dict(obj: Mapping[str, Any], metadata_location: str | None) -> TableMetadata:
    what = "table metadata"
    version = js.get_int(obj, "format-version", what)
    _check_format_version(version)
    v2 = version >= 2

    def required_v2(key: str) -> None:
        if v2 and obj.get(key) is None:
            raise InvalidMetadataError(f"{what} of format v{version} is missing required {key!r}")

    for key in (
        "table-uuid",
        "last-sequence-number",
        "schemas",
        "current-schema-id",
        "partition-specs",
        "default-spec-id",
        "last-partition-id",
        "sort-orders",
        "default-sort-order-id",
    ):
        required_v2(key)
    if version >= 3 and obj.get("next-row-id") is None:
        raise InvalidMetadataError(f"{what} of format v{version} is missing required 'next-row-id'")

    if obj.get("schemas") is not None:
        schemas = tuple(Schema.from_json(s) for s in js.get_list(obj, "schemas", what))
        current_schema_id = js.get_int(obj, "current-schema-id", what)
    else:
        if obj.get("schema") is None:
            raise InvalidMetadataError(f"{what} has neither 'schemas' nor 'schema'")
        schema = Schema.from_json(obj["schema"])
        schemas, current_schema_id = (schema,), schema.schema_id

    if obj.get("partition-specs") is not None:
        specs = tuple(PartitionSpec.from_json(s) for s in js.get_list(obj, "partition-specs", what))
        default_spec_id = js.get_int(obj, "default-spec-id", what)
    else:
        if obj.get("partition-spec") is None:
            raise InvalidMetadataError(f"{what} has neither 'partition-specs' nor 'partition-spec'")
        specs = (PartitionSpec.from_json_fields(obj["partition-spec"], 0),)
        default_spec_id = 0

    last_partition_id = js.opt_int(obj, "last-partition-id", what)
    if last_partition_id is None:
        last_partition_id = max(s.last_assigned_field_id for s in specs)

    if obj.get("sort-orders") is not None:
        orders = tuple(SortOrder.from_json(s) for s in js.get_list(obj, "sort-orders", what))
        default_order_id = js.get_int(obj, "default-sort-order-id", what)
    else:
        orders, default_order_id = (SortOrder(),), 0

    current_snapshot_id = js.opt_long(obj, "current-snapshot-id", what)
    if current_snapshot_id == -1:
        current_snapshot_id = None

    if obj.get("refs") is not None:
        refs_node = js.as_object(obj["refs"], f"{what} 'refs'")
        refs = {name: SnapshotRef.from_json(ref, name) for name, ref in refs_node.items()}
    elif current_snapshot_id is not None:
        # Spec: there is always a main branch at current-snapshot-id, even without refs.
        refs = {MAIN_BRANCH: SnapshotRef.branch(current_snapshot_id)}
    else:
        refs = {}

    def items(key: str) -> list[Any]:
        return js.get_list(obj, key, what) if obj.get(key) is not None else []

    known = _KNOWN_FIELDS | ({"next-row-id"} if version >= 3 else set())
    metadata = TableMetadata(
        format_version=version,
        table_uuid=(js.get_str if v2 else js.opt_str)(obj, "table-uuid", what),
        location=js.get_str(obj, "location", what),
        last_sequence_number=js.get_long(obj, "last-sequence-number", what) if v2 else 0,
        last_updated_ms=js.get_long(obj, "last-updated-ms", what),
        last_column_id=js.get_int(obj, "last-column-id", what),
        schemas=schemas,
        current_schema_id=current_schema_id,
        partition_specs=specs,
        default_spec_id=default_spec_id,
        last_partition_id=last_partition_id,
        properties=js.opt_str_map(obj, "properties", what) or {},
        current_snapshot_id=current_snapshot_id,
        snapshots=tuple(Snapshot.from_json(s) for s in items("snapshots")),
        snapshot_log=tuple(SnapshotLogEntry.from_json(e) for e in items("snapshot-log")),
        metadata_log=tuple(MetadataLogEntry.from_json(e) for e in items("metadata-log")),
        sort_orders=orders,
        default_sort_order_id=default_order_id,
        refs=refs,
        statistics=tuple(StatisticsFile.from_json(s) for s in items("statistics")),
        partition_statistics=tuple(
            PartitionStatisticsFile.from_json(s) for s in items("partition-statistics")
        ),
        next_row_id=js.get_long(obj, "next-row-id", what) if version >= 3 else None,
        extras={k: v for k, v in obj.items() if k not in known},
    )
    object.__setattr__(metadata, "metadata_location", metadata_location)
    return metadata


def check_same_table(previous: TableMetadata, refreshed: TableMetadata) -> TableMetadata:
    """Return ``refreshed`` if it may replace ``previous``: the spec requires an exception when
    a table's UUID changes on refresh. Metadata without a UUID (old v1) is accepted, as Java
    does."""
    if (
        previous.table_uuid is not None
        and refreshed.table_uuid is not None
        and previous.table_uuid.lower() != refreshed.table_uuid.lower()
    ):
        where = f" (read from {refreshed.metadata_location})" if refreshed.metadata_location else ""
        raise TableUUIDMismatchError(
            f"table UUID changed on refresh: expected {previous.table_uuid}, got "
            f"{refreshed.table_uuid}{where}"
        )
    return refreshed


def _is_gzip_name(location: str) -> bool:
    # Java's Codec.fromFileName: *.gz.metadata.json, and the old *.metadata.json.gz.
    name = location.rsplit("/", 1)[-1]
    return name.endswith(".metadata.json.gz") or name.endswith(".gz.metadata.json")


def read_metadata(location: str | os.PathLike[str], *, io: IOLike = None) -> TableMetadata:
    """Read a metadata file, plain or gzip-compressed (recognised by its content, so any of
    Java's names work), through ``io`` (a :class:`~frazil.io.FileIO` or its properties; local
    files and ``file:`` URIs need none)."""
    location = os.fspath(location)
    data = resolve(io).read(location)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise InvalidMetadataError(f"{location}: corrupt gzip data ({error})") from None
    try:
        node = js.parse_json(data, "table metadata")
    except InvalidMetadataError as error:
        raise InvalidMetadataError(f"{location}: {error}") from None
    return TableMetadata.from_json(js.as_object(node, "table metadata"), metadata_location=location)


def write_metadata(
    metadata: TableMetadata, location: str | os.PathLike[str], *, io: IOLike = None
) -> None:
    """Write a metadata file through ``io`` (a :class:`~frazil.io.FileIO` or its properties);
    gzip-compressed when its name says so (``*.gz.metadata.json``, as Java). Refuses to
    overwrite an existing file (:class:`~frazil.errors.AlreadyExistsError`, a
    ``FileExistsError``), because metadata files are immutable once written; the check and
    the write are one atomic step, so of two writers racing for a name only one wins."""
    location = os.fspath(location)
    data = metadata.to_json().encode("utf-8")
    if _is_gzip_name(location):
        data = gzip.compress(data)
    resolve(io).write(location, data, overwrite=False)
