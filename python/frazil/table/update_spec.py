"""Partition spec evolution (spec: "Partition Evolution"; Java: ``BaseUpdatePartitionSpec``).

::

    with UpdateSpec(metadata) as update:
        update.add_field("id", "bucket[16]")          # named "id_bucket_16"
        update.add_field("ts", "day", name="event_day")
        update.remove_field("category")
        update.rename_field("region", "area")

Default names are Java's: ``identity`` keeps the source column's full name; the others append
``_bucket_N``, ``_trunc_W``, ``_year``, ``_month``, ``_day``, ``_hour`` or ``_null`` (void).

Format v1 and v2+ differ as the spec says. In v1, partition field ids are positional (from
1000), so fields are never reordered or dropped: a removed field becomes a ``void`` transform
under the same id, and new fields go at the end. In v2+, a removed field is dropped; a new
field gets the next id after ``last-partition-id``, unless some earlier spec of the table had a
field with the same source and transform (and name, when one is given), whose id and name are
reused so that old data files stay comparable.
"""

from __future__ import annotations

import re

from frazil.errors import InvalidUpdateError
from frazil.metadata import TableMetadata
from frazil.partitioning import (
    PartitionField,
    PartitionSpec,
    canonical_transform,
    check_transform_source,
    is_known_transform,
)
from frazil.table._apply import same_spec
from frazil.table._builder import Committer, EvolutionBuilder
from frazil.table.updates import LAST_ADDED, AddPartitionSpec, SetDefaultSpec, TableUpdate
from frazil.types import ListType, MapType, PrimitiveType

__all__ = ["UpdateSpec", "default_partition_name"]

_TIME_TRANSFORMS = ("year", "month", "day", "hour")
_PARAMETER = re.compile(r"(bucket|truncate)\[(\d+)\]")


def default_partition_name(source_name: str, transform: str) -> str:
    """The name Java gives a partition field (PartitionNameGenerator)."""
    if transform == "identity":
        return source_name
    if transform == "void":
        return f"{source_name}_null"
    match = _PARAMETER.fullmatch(transform)
    if match:
        kind = "bucket" if match.group(1) == "bucket" else "trunc"
        return f"{source_name}_{kind}_{match.group(2)}"
    return f"{source_name}_{transform}"


class UpdateSpec(EvolutionBuilder[PartitionSpec]):
    """Evolve the default partition spec of a table."""

    def __init__(
        self,
        metadata: TableMetadata,
        *,
        case_sensitive: bool = True,
        committer: Committer | None = None,
    ) -> None:
        super().__init__(metadata, committer)
        self._spec = metadata.spec()
        for f in self._spec.fields:
            if not f.is_known_transform:
                raise InvalidUpdateError(
                    f"cannot update partition spec {self._spec.spec_id}: field {f.name!r} has "
                    f"the unknown transform {f.transform!r}"
                )
        self._schema = metadata.schema()
        self._version = metadata.format_version
        self._case_sensitive = case_sensitive
        self._last_partition_id = metadata.last_partition_id
        self._by_name = {f.name: f for f in self._spec.fields}
        self._by_transform = {(f.source_id, f.transform): f for f in self._spec.fields}
        self._adds: list[PartitionField] = []
        self._added_by_name: dict[str, PartitionField] = {}
        self._added_by_transform: dict[tuple[int, str], PartitionField] = {}
        self._added_time_fields: dict[int, PartitionField] = {}
        self._deletes: set[int] = set()
        self._renames: dict[str, str] = {}

    def _resolve(self, source: str, transform: str) -> tuple[int, str]:
        if not isinstance(source, str):
            raise InvalidUpdateError(f"a partition source must be a column name, got {source!r}")
        column = self._schema.find_field(source, self._case_sensitive)
        if column is None:
            raise InvalidUpdateError(
                f"cannot partition by {source!r}: no such column in schema {self._schema.schema_id}"
            )
        text = canonical_transform(str(transform))
        if not is_known_transform(text):
            raise InvalidUpdateError(f"cannot partition by the unknown transform {transform!r}")
        if not isinstance(column.field_type, PrimitiveType):
            raise InvalidUpdateError(
                f"cannot partition by {source!r}: it is a {column.field_type}, not a primitive"
            )
        for parent_id in self._schema.parent_ids(column.field_id):
            if isinstance(self._schema.find_type(parent_id), (ListType, MapType)):
                raise InvalidUpdateError(
                    f"cannot partition by {source!r}: it is inside a list or map"
                )
        check_transform_source(text, column.field_type, f"partition field on {source!r}")
        return column.field_id, text

    def _recycle_or_create(
        self, source_id: int, transform: str, name: str | None
    ) -> PartitionField:
        if self._version >= 2:
            for spec in self._base.partition_specs:
                for f in spec.fields:
                    if f.source_id == source_id and f.transform == transform:
                        if name is None or f.name == name:
                            return f
        self._last_partition_id += 1
        source_name = self._schema.find_column_name(source_id)
        assert source_name is not None
        return PartitionField(
            source_id,
            self._last_partition_id,
            transform,
            name if name is not None else default_partition_name(source_name, transform),
        )

    def add_field(
        self, source: str, transform: str = "identity", name: str | None = None
    ) -> UpdateSpec:
        """Partition by ``transform`` of column ``source`` (a transform string such as
        ``"bucket[16]"``, ``"day"``, ``"truncate[4]"``)."""
        if name is not None and name in self._added_by_name:
            raise InvalidUpdateError(f"cannot add partition field {name!r} twice")
        source_id, text = self._resolve(source, transform)
        key = (source_id, text)
        existing = self._by_transform.get(key)
        if existing is not None and existing.field_id in self._deletes:
            # Removing and re-adding the same field keeps it (Java: rewriteDeleteAndAddField).
            self._deletes.discard(existing.field_id)
            if name is None or name == existing.name:
                return self
            return self.rename_field(existing.name, name)
        if existing is not None:
            raise InvalidUpdateError(
                f"cannot add partition field {text}({source}): it duplicates existing field "
                f"{existing.name!r}"
            )
        added = self._added_by_transform.get(key)
        if added is not None:
            raise InvalidUpdateError(
                f"cannot add partition field {text}({source}): already added as {added.name!r}"
            )
        new = self._recycle_or_create(source_id, text, name)
        if text in _TIME_TRANSFORMS:
            other = self._added_time_fields.get(source_id)
            if other is not None:
                raise InvalidUpdateError(
                    f"cannot add redundant partition field {new.name!r} ({text}): it conflicts "
                    f"with {other.name!r} ({other.transform}) on the same column"
                )
            self._added_time_fields[source_id] = new
        self._added_by_transform[key] = new
        clash = self._by_name.get(new.name)
        if clash is not None and clash.field_id not in self._deletes:
            if clash.transform == "void":
                # A void field (v1's removed field) yields its name to the new one.
                self.rename_field(clash.name, f"{clash.name}_{clash.field_id}")
            else:
                raise InvalidUpdateError(
                    f"cannot add partition field {new.name!r}: the spec already has a field of "
                    "that name"
                )
        elif clash is not None:
            self._renames[clash.name] = f"{clash.name}_{clash.field_id}"
        if new.name in self._added_by_name:
            raise InvalidUpdateError(f"cannot add partition field {new.name!r} twice")
        self._added_by_name[new.name] = new
        self._adds.append(new)
        return self

    def add_identity(self, source: str) -> UpdateSpec:
        return self.add_field(source, "identity")

    def remove_field(self, name: str) -> UpdateSpec:
        """Stop partitioning by the field ``name`` (v1: it becomes ``void``)."""
        if name in self._added_by_name:
            raise InvalidUpdateError(f"cannot remove partition field {name!r}: it is being added")
        if name in self._renames:
            raise InvalidUpdateError(
                f"cannot rename and remove partition field {name!r} in one update"
            )
        field = self._by_name.get(name)
        if field is None:
            raise InvalidUpdateError(
                f"cannot remove partition field {name!r}: spec {self._spec.spec_id} has no such "
                "field"
            )
        self._deletes.add(field.field_id)
        return self

    def rename_field(self, name: str, new_name: str) -> UpdateSpec:
        if not isinstance(new_name, str) or not new_name:
            raise InvalidUpdateError(f"cannot rename partition field {name!r} to {new_name!r}")
        clash = self._by_name.get(new_name)
        if clash is not None and clash.transform == "void" and clash.name != name:
            self.rename_field(clash.name, f"{clash.name}_{clash.field_id}")
        if name in self._added_by_name:
            raise InvalidUpdateError(f"cannot rename partition field {name!r}: it is being added")
        field = self._by_name.get(name)
        if field is None:
            raise InvalidUpdateError(
                f"cannot rename partition field {name!r}: spec {self._spec.spec_id} has no such "
                "field"
            )
        if field.field_id in self._deletes:
            raise InvalidUpdateError(
                f"cannot remove and rename partition field {name!r} in one update"
            )
        self._renames[name] = new_name
        return self

    def apply(self) -> PartitionSpec:
        """The new spec (its spec id is assigned when it is committed)."""
        fields: list[PartitionField] = []
        for f in self._spec.fields:
            name = self._renames.get(f.name, f.name)
            if f.field_id not in self._deletes:
                fields.append(PartitionField(f.source_id, f.field_id, f.transform, name))
            elif self._version == 1:
                # v1 ids are positional: a removed field stays, always null (spec: Partition
                # Evolution).
                fields.append(PartitionField(f.source_id, f.field_id, "void", name))
        fields.extend(self._adds)
        names: set[str] = set()
        for f in fields:
            if f.name in names:
                raise InvalidUpdateError(
                    f"the partition spec would have two fields named {f.name!r}"
                )
            names.add(f.name)
            column = self._schema.find_field(f.name)
            if (
                column is not None
                and column.field_id != f.source_id
                and self._schema.find_field(f.source_id) is not None
            ):
                raise InvalidUpdateError(
                    f"partition field name {f.name!r} is a column of the schema other than its "
                    "source; choose another name"
                )
        return PartitionSpec(self._spec.spec_id, tuple(fields))

    def updates(self) -> tuple[TableUpdate, ...]:
        new = self.apply()
        if same_spec(new, self._spec):
            return ()
        for spec in self._base.partition_specs:
            if same_spec(spec, new):
                return (SetDefaultSpec(spec.spec_id),)
        return (AddPartitionSpec(new), SetDefaultSpec(LAST_ADDED))
