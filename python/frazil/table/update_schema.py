"""Schema evolution (spec: "Schema Evolution", "Default values", "Identifier Field IDs").

:class:`UpdateSchema` follows Apache Iceberg Java's ``SchemaUpdate`` and pyiceberg's
``UpdateSchema``::

    with UpdateSchema(metadata) as update:
        update.add_column("ts", "timestamptz", doc="event time")
        update.add_column(("location", "alt"), DoubleType())  # into the struct "location"
        update.rename_column("id", "event_id")
        update.update_column("count", field_type=LongType())   # int -> long
        update.move_first("ts")
    new_metadata = update.metadata

Column names. A column is named by its dotted full name (``"location.lat"``), by a tuple of
names (for names that themselves contain dots), or, as in Java, by the short name that skips the
``element`` and ``value`` of a list or map of structs (``"points.x"`` for
``"points.element.x"``). ``add_column`` takes the new column's path: a dotted string is split
at its last dot into the parent and the new name, so ``add_column("points.z", ...)`` and
``add_column("points.element.z", ...)`` both add ``z`` to the struct of a list's elements
(Java: the parent may be a struct, a list of structs or a map with struct values).

The rules (each refusal raises :class:`~frazil.errors.InvalidUpdateError` naming the column):

* New columns and their nested fields get fresh ids above the table's ``last-column-id``.
* Type changes are the spec's promotions only: int -> long, float -> double,
  decimal(P, S) -> decimal(P', S) with P' > P. Nested types never change kind (no struct <->
  primitive), and fields cannot move between structs.
* Optional -> required needs ``allow_incompatible_changes`` (Java's ``requireColumn``), except
  for a column added in the same update with a default; required -> optional is always allowed.
* Adding a required column needs a non-null default, which needs format v3; before v3 it needs
  ``allow_incompatible_changes``. ``initial-default`` is fixed when a column is added;
  ``write-default`` may change later (v3).
* A column cannot be deleted and changed in the same update, nor deleted while it (or a field
  inside it) is an identifier field, unless :meth:`UpdateSchema.set_identifier_fields` also
  drops it. Map keys and list elements cannot be deleted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from frazil.errors import FrazilError, InvalidUpdateError
from frazil.metadata import TableMetadata
from frazil.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY, NameMapping
from frazil.schema import Schema
from frazil.table._builder import Committer, EvolutionBuilder
from frazil.table._defaults import check_default
from frazil.table._name_mapping import update_name_mapping
from frazil.table._paths import (
    ROOT,
    Path,
    find_by_path,
    path_name,
    rebuild_struct,
    split_path,
)
from frazil.table.updates import (
    LAST_ADDED,
    AddSchema,
    RemoveProperties,
    SetCurrentSchema,
    SetProperties,
    TableUpdate,
)
from frazil.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    parse_type,
)

__all__ = ["UpdateSchema", "is_promotion_allowed"]

_UNSET: Any = object()

# Java's TableProperties: per-column settings keyed by the column's full name. Java's
# SchemaUpdate moves the first three; the bloom filter's fpp moves with its filter here (in
# Java it stays behind, and the renamed column's filter falls back to the default fpp).
_COLUMN_PROPERTY_PREFIXES = (
    "write.metadata.metrics.column.",
    "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.stats-enabled.column.",
    "write.parquet.bloom-filter-fpp.column.",
)


def is_promotion_allowed(source: IcebergType, target: IcebergType) -> bool:
    """Whether the spec allows promoting ``source`` to ``target`` (spec: Schema Evolution)."""
    if source == target:
        return True
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType) and isinstance(target, DecimalType):
        return target.scale == source.scale and target.precision >= source.precision
    return False


def _as_type(value: IcebergType | str) -> IcebergType:
    if isinstance(value, IcebergType):
        return value
    if isinstance(value, str):
        return parse_type(value)
    raise InvalidUpdateError(f"expected an Iceberg type or type string, got {value!r}")


def _all_types(t: IcebergType) -> list[IcebergType]:
    out = [t]
    for child in t.child_fields():
        out.extend(_all_types(child.field_type))
    return out


def assign_fresh_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    """``t`` with new ids for every nested field, in Java's order (TypeUtil.assignFreshIds): a
    struct's fields first, then their types; a map's key and value ids, then their types."""
    if isinstance(t, StructType):
        ids = [next_id() for _ in t.fields]
        return StructType(
            tuple(
                dataclasses.replace(
                    f, field_id=new_id, field_type=assign_fresh_ids(f.field_type, next_id)
                )
                for f, new_id in zip(t.fields, ids, strict=True)
            )
        )
    if isinstance(t, ListType):
        element_id = next_id()
        return ListType(element_id, assign_fresh_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = next_id(), next_id()
        return MapType(
            key_id,
            assign_fresh_ids(t.key_type, next_id),
            value_id,
            assign_fresh_ids(t.value_type, next_id),
            t.value_required,
        )
    return t


class UpdateSchema(EvolutionBuilder[Schema]):
    """Evolve the current schema of a table. See the module docstring for the rules."""

    def __init__(
        self,
        metadata: TableMetadata,
        *,
        allow_incompatible_changes: bool = False,
        case_sensitive: bool = True,
        committer: Committer | None = None,
    ) -> None:
        super().__init__(metadata, committer)
        self._schema = metadata.schema()
        self._format_version = metadata.format_version
        self._allow_incompatible = allow_incompatible_changes
        self._case_sensitive = case_sensitive
        self._last_column_id = metadata.last_column_id
        self._deletes: set[int] = set()
        self._updates: dict[int, NestedField] = {}
        self._adds: dict[int, list[int]] = {}
        self._added_names: dict[str, int] = {}
        self._moves: dict[int, list[tuple[str, int, int]]] = {}
        self._parents: dict[int, int] = {}
        for _, f in self._schema.all_fields():
            parents = self._schema.parent_ids(f.field_id)
            if parents:
                self._parents[f.field_id] = parents[-1]
        # Identifier fields stay tracked by id (renames do not matter) until
        # set_identifier_fields names new ones, which are resolved in the new schema.
        self._identifier_names: list[str] | None = None

    # --- lookups ----------------------------------------------------------------------------------

    def _key(self, name: str) -> str:
        return name if self._case_sensitive else name.lower()

    def _find(self, path: Path) -> NestedField | None:
        """A field of the base schema by dotted name or tuple path."""
        if isinstance(path, tuple):
            return find_by_path(self._schema.as_struct(), path, self._case_sensitive)
        if not isinstance(path, str):
            raise InvalidUpdateError(f"a column must be named by a str or tuple, got {path!r}")
        return self._schema.find_field(path, self._case_sensitive)

    def _name(self, path: Path) -> str:
        return path_name(path)

    def _find_for_update(self, path: Path) -> NestedField | None:
        existing = self._find(path)
        if existing is not None:
            return self._updates.get(existing.field_id, existing)
        added = self._added_names.get(self._key(self._name(path)))
        return None if added is None else self._updates[added]

    def _require(self, path: Path, action: str) -> NestedField:
        found = self._find_for_update(path)
        if found is None:
            raise InvalidUpdateError(
                f"cannot {action} missing column {self._name(path)!r} "
                f"(schema {self._schema.schema_id})"
            )
        if found.field_id in self._deletes:
            raise InvalidUpdateError(
                f"cannot {action} column {self._name(path)!r}: it is being deleted"
            )
        return found

    def _next_id(self) -> int:
        self._last_column_id += 1
        return self._last_column_id

    # --- changes ----------------------------------------------------------------------------------

    def add_column(
        self,
        path: Path,
        field_type: IcebergType | str,
        doc: str | None = None,
        required: bool = False,
        default: Any = None,
    ) -> UpdateSchema:
        """Add a column (see the module docstring for paths). ``default`` (JSON single-value
        form, spec Appendix D) becomes both its initial-default and write-default (v3)."""
        parent_path, name = split_path(path)
        new_type = _as_type(field_type)
        parent_id = ROOT
        full_name = name
        if parent_path is not None:
            parent_name = path_name(parent_path)
            parent = self._find(parent_path)
            if parent is None:
                raise InvalidUpdateError(
                    f"cannot add column {name!r}: parent {parent_name!r} not found"
                )
            container = parent.field_type
            target = parent
            if isinstance(container, ListType):
                target = container.element_field
            elif isinstance(container, MapType):
                target = container.value_field
            if not isinstance(target.field_type, StructType):
                raise InvalidUpdateError(
                    f"cannot add column {name!r} to non-struct column {parent_name!r} "
                    f"({parent.field_type})"
                )
            if target.field_id in self._deletes or parent.field_id in self._deletes:
                raise InvalidUpdateError(
                    f"cannot add column {name!r} to {parent_name!r}: it is being deleted"
                )
            parent_id = target.field_id
            full_name = f"{self._schema.find_column_name(parent_id)}.{name}"
            existing = target.field_type.field_by_name(name, self._case_sensitive)
        else:
            existing = self._schema.as_struct().field_by_name(name, self._case_sensitive)
        if existing is not None and existing.field_id not in self._deletes:
            raise InvalidUpdateError(f"cannot add column {full_name!r}: name already exists")
        if self._key(full_name) in self._added_names:
            raise InvalidUpdateError(f"cannot add column {full_name!r} twice")
        for inner in _all_types(new_type):
            if inner.min_format_version > self._format_version:
                raise InvalidUpdateError(
                    f"cannot add column {full_name!r}: type {inner} needs format "
                    f"v{inner.min_format_version} (table is v{self._format_version})"
                )
        if default is not None:
            if self._format_version < 3:
                raise InvalidUpdateError(
                    f"cannot add column {full_name!r} with a default value: default values "
                    f"need format v3 (table is v{self._format_version})"
                )
            check_default(default, new_type, full_name)
        if required and default is None and not self._allow_incompatible:
            hint = (
                "give it a non-null default"
                if self._format_version >= 3
                else "default values need format v3"
            )
            raise InvalidUpdateError(
                f"incompatible change: cannot add required column {full_name!r} without a "
                f"default value ({hint}; or allow incompatible changes)"
            )
        new_id = self._next_id()
        new_field = NestedField(
            new_id,
            name,
            assign_fresh_ids(new_type, self._next_id),
            required,
            doc,
            initial_default=default,
            write_default=default,
        )
        self._updates[new_id] = new_field
        self._adds.setdefault(parent_id, []).append(new_id)
        self._added_names[self._key(full_name)] = new_id
        if parent_id != ROOT:
            self._parents[new_id] = parent_id
        return self

    def delete_column(self, path: Path) -> UpdateSchema:
        """Delete a column (and everything inside it)."""
        f = self._find(path)
        if f is None:
            raise InvalidUpdateError(f"cannot delete missing column {self._name(path)!r}")
        if f.field_id in self._adds:
            raise InvalidUpdateError(
                f"cannot delete column {self._name(path)!r}: columns are being added to it"
            )
        if f.field_id in self._updates:
            raise InvalidUpdateError(
                f"cannot delete column {self._name(path)!r}: it has other changes in this update"
            )
        parent_id = self._parents.get(f.field_id)
        if parent_id is not None:
            parent = self._schema.field(parent_id).field_type
            if isinstance(parent, MapType):
                raise InvalidUpdateError(f"cannot delete map key or value {self._name(path)!r}")
            if isinstance(parent, ListType):
                raise InvalidUpdateError(f"cannot delete list element {self._name(path)!r}")
        self._deletes.add(f.field_id)
        return self

    def rename_column(self, path: Path, new_name: str) -> UpdateSchema:
        """Rename a column (its id stays)."""
        if not isinstance(new_name, str) or not new_name:
            raise InvalidUpdateError(f"cannot rename {self._name(path)!r} to {new_name!r}")
        f = self._require(path, "rename")
        self._check_not_map_key(f, "rename")
        self._updates[f.field_id] = dataclasses.replace(f, name=new_name)
        return self

    def update_column(
        self,
        path: Path,
        field_type: IcebergType | str | None = None,
        required: bool | None = None,
        doc: str | None = _UNSET,
        write_default: Any = _UNSET,
    ) -> UpdateSchema:
        """Promote a column's type, change its nullability, doc or write-default (v3)."""
        f = self._require(path, "update")
        name = self._name(path)
        self._check_not_map_key(f, "update")
        if field_type is not None:
            new_type = _as_type(field_type)
            if new_type != f.field_type:
                if not isinstance(f.field_type, PrimitiveType):
                    raise InvalidUpdateError(
                        f"cannot change the type of {name!r}: it is a {f.field_type} "
                        "(nested types never change kind)"
                    )
                if not isinstance(new_type, PrimitiveType):
                    raise InvalidUpdateError(
                        f"cannot change column {name!r} from {f.field_type} to {new_type}: a "
                        "primitive cannot become a nested type"
                    )
                if not is_promotion_allowed(f.field_type, new_type):
                    raise InvalidUpdateError(
                        f"cannot change column type {name!r}: {f.field_type} -> {new_type} is "
                        "not an allowed promotion (int -> long, float -> double, "
                        "decimal(P, S) -> decimal(P', S) with P' > P)"
                    )
                f = dataclasses.replace(f, field_type=new_type)
        if required is not None and required != f.required:
            is_defaulted_add = (
                self._key(name) in self._added_names and f.initial_default is not None
            )
            if required and not (is_defaulted_add or self._allow_incompatible):
                raise InvalidUpdateError(
                    f"cannot change column nullability of {name!r}: optional -> required is an "
                    "incompatible change (allow incompatible changes to force it)"
                )
            f = dataclasses.replace(f, required=required)
        if doc is not _UNSET:
            f = dataclasses.replace(f, doc=doc)
        if write_default is not _UNSET:
            if self._format_version < 3:
                raise InvalidUpdateError(
                    f"cannot set the write-default of {name!r}: default values need format v3 "
                    f"(table is v{self._format_version})"
                )
            if write_default is not None:
                check_default(write_default, f.field_type, name)
            f = dataclasses.replace(f, write_default=write_default)
        self._updates[f.field_id] = f
        return self

    def make_column_optional(self, path: Path) -> UpdateSchema:
        return self.update_column(path, required=False)

    def require_column(self, path: Path) -> UpdateSchema:
        """Optional -> required (needs ``allow_incompatible_changes``, as Java)."""
        return self.update_column(path, required=True)

    def _check_not_map_key(self, f: NestedField, action: str) -> None:
        parent_id = self._parents.get(f.field_id)
        if parent_id is not None:
            parent = self._schema.find_type(parent_id)
            if isinstance(parent, MapType) and parent.key_id == f.field_id:
                raise InvalidUpdateError(f"cannot {action} map keys ({f.field_id})")

    # --- moves ------------------------------------------------------------------------------------

    def _find_for_move(self, path: Path) -> int | None:
        added = self._added_names.get(self._key(self._name(path)))
        if added is not None:
            return added
        f = self._find(path)
        return None if f is None else f.field_id

    def _move(self, kind: str, path: Path, other: Path | None) -> UpdateSchema:
        name = self._name(path)
        field_id = self._find_for_move(path)
        if field_id is None:
            raise InvalidUpdateError(f"cannot move missing column {name!r}")
        if field_id in self._deletes:
            raise InvalidUpdateError(f"cannot move column {name!r}: it is being deleted")
        parent_id = self._parents.get(field_id, ROOT)
        ref_id = -1
        if other is not None:
            found = self._find_for_move(other)
            if found is None:
                raise InvalidUpdateError(
                    f"cannot move {name!r} {kind} missing column {self._name(other)!r}"
                )
            if found == field_id:
                raise InvalidUpdateError(f"cannot move {name!r} {kind} itself")
            if found in self._deletes:
                raise InvalidUpdateError(
                    f"cannot move {name!r} {kind} {self._name(other)!r}: it is being deleted"
                )
            if self._parents.get(found, ROOT) != parent_id:
                raise InvalidUpdateError(
                    f"cannot move {name!r} {kind} {self._name(other)!r}: fields cannot move to "
                    "a different struct"
                )
            ref_id = found
        if parent_id != ROOT:
            parent = self._schema.find_type(parent_id)
            if parent is not None and not isinstance(parent, StructType):
                raise InvalidUpdateError(f"cannot move fields of non-struct type {parent}")
        self._moves.setdefault(parent_id, []).append((kind, field_id, ref_id))
        return self

    def move_first(self, path: Path) -> UpdateSchema:
        return self._move("first", path, None)

    def move_before(self, path: Path, before: Path) -> UpdateSchema:
        return self._move("before", path, before)

    def move_after(self, path: Path, after: Path) -> UpdateSchema:
        return self._move("after", path, after)

    # --- identifier fields and union --------------------------------------------------------------

    def set_identifier_fields(self, *names: str | Iterable[str]) -> UpdateSchema:
        """Replace the identifier fields by these columns (full dotted names)."""
        flat: list[str] = []
        for item in names:
            flat.extend([item] if isinstance(item, str) else list(item))
        self._identifier_names = list(dict.fromkeys(flat))
        return self

    def union_by_name(self, other: Schema | Any) -> UpdateSchema:
        """Add the columns of ``other`` that this schema lacks (as optional), widen types where
        ``other``'s are a promotion, relax nullability and take its docs (Java:
        UnionByNameVisitor). Fields are matched by name.

        ``other`` is a frazil Schema or, as in pyiceberg, a pyarrow Schema, converted as
        ``create_table`` converts one (:func:`frazil.table._arrow_schema.schema_from_arrow`,
        with this table's format version and ``downcast-ns-timestamp-to-us-on-write``)."""
        from frazil.table._union import union_by_name

        if not isinstance(other, Schema):
            other = self._arrow_schema(other)
        union_by_name(self, self._schema, other)
        return self

    def _arrow_schema(self, other: Any) -> Schema:
        import pyarrow as pa

        if not isinstance(other, pa.Schema):
            raise InvalidUpdateError(
                "union_by_name takes a frazil Schema or a pyarrow Schema, got "
                f"{type(other).__name__}"
            )
        from frazil.table._arrow_schema import schema_from_arrow
        from frazil.table._properties import downcast_ns

        return schema_from_arrow(
            other,
            format_version=self._format_version,
            downcast_ns=downcast_ns(self._base.properties),
        )

    # --- result -----------------------------------------------------------------------------------

    def apply(self) -> Schema:
        """The new schema (its schema id is assigned when it is committed)."""
        if self._identifier_names is None:
            for field_id in self._schema.identifier_field_ids:
                for checked in (field_id, *self._schema.parent_ids(field_id)):
                    if checked in self._deletes:
                        raise InvalidUpdateError(
                            f"cannot delete {self._schema.find_column_name(checked)!r}: "
                            f"identifier field {self._schema.find_column_name(field_id)!r} would "
                            "be deleted (set the identifier fields without it first)"
                        )
        fields = rebuild_struct(
            self._schema.fields, ROOT, self._deletes, self._updates, self._adds, self._moves
        )
        if self._identifier_names is None:
            return Schema(
                fields=fields,
                schema_id=self._schema.schema_id,
                identifier_field_ids=self._schema.identifier_field_ids,
            )
        result = Schema(fields=fields, schema_id=self._schema.schema_id)
        ids = []
        for name in self._identifier_names:
            found = result.find_field_id(name, self._case_sensitive)
            if found is None:
                raise InvalidUpdateError(
                    f"cannot make {name!r} an identifier field: not found in the schema or the "
                    "added columns"
                )
            ids.append(found)
        return Schema(fields=fields, schema_id=self._schema.schema_id, identifier_field_ids=ids)

    def updates(self) -> tuple[TableUpdate, ...]:
        new = self.apply()
        base = self._base
        if new.fields == self._schema.fields and set(new.identifier_field_ids) == set(
            self._schema.identifier_field_ids
        ):
            return ()
        for existing in base.schemas:
            if existing.fields == new.fields and set(existing.identifier_field_ids) == set(
                new.identifier_field_ids
            ):
                return (SetCurrentSchema(existing.schema_id), *self._property_updates(new))
        return (
            AddSchema(new, self._last_column_id),
            SetCurrentSchema(LAST_ADDED),
            *self._property_updates(new),
        )

    def _property_updates(self, new: Schema) -> tuple[TableUpdate, ...]:
        """Java's SchemaUpdate also keeps two kinds of table properties in step: the default
        name mapping (renamed fields gain their new name, added fields are mapped; a mapping
        that does not parse is left alone, as Java only logs it), and the column properties
        (metrics mode, Parquet bloom filters and stats), which follow renamed columns and go
        with deleted ones."""
        properties = self._base.properties
        set_: dict[str, str] = {}
        removed: list[str] = []
        text = properties.get(DEFAULT_NAME_MAPPING_PROPERTY)
        if text is not None:
            try:
                mapping = NameMapping.from_json(text)
            except FrazilError:
                mapping = None
            if mapping is not None:
                updated = update_name_mapping(mapping, self._updates, self._adds)
                if updated != mapping:
                    set_[DEFAULT_NAME_MAPPING_PROPERTY] = updated.to_json()
        # Java looks only at the renamed or deleted field itself; fields nested in a renamed
        # or deleted struct are followed too here, so that no property names a lost column.
        deleted: set[str] = set()
        renamed: dict[str, str] = {}
        for old, f in self._schema.all_fields():
            now = new.find_column_name(f.field_id)
            if now is None:
                deleted.add(old)
            elif now != old:
                renamed[old] = now
        for key, value in properties.items():
            prefix = next((p for p in _COLUMN_PROPERTY_PREFIXES if key.startswith(p)), None)
            if prefix is None:
                continue
            column = key[len(prefix) :]
            if column in renamed:
                removed.append(key)
                set_[prefix + renamed[column]] = value
            elif column in deleted:
                removed.append(key)
        out: list[TableUpdate] = []
        if set_:
            out.append(SetProperties(set_))
        removals = [key for key in removed if key not in set_]
        if removals:
            out.append(RemoveProperties(tuple(removals)))
        return tuple(out)
