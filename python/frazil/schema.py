"""Table schemas (spec: "Schemas and Data Types", Appendix C "Schemas").

A :class:`Schema` is an immutable struct of fields with a ``schema_id`` and the
``identifier_field_ids``. Constructing one checks the rules every schema must
follow: field ids unique across the whole schema, none in the reserved range
(spec: "Reserved Field IDs"), and identifier fields as "Identifier Field IDs"
requires. Lookups by id and by dotted name are indexed once per schema.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import InvalidMetadataError, InvalidSchemaError, UnknownFieldError
from frazil.types import (
    DoubleType,
    FloatType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
    check_default,
    field_to_json,
    nesting_error,
    too_deeply_nested,
    type_from_json,
)

__all__ = ["MAX_FIELD_ID", "Schema"]

# Spec: "Reserved Field IDs": ids above Integer.MAX_VALUE - 200 belong to metadata columns.
MAX_FIELD_ID = 2**31 - 1 - 200

_UNSET: Any = object()


@dataclass(frozen=True)
@checked(error=InvalidSchemaError)
class Schema:
    """A table schema: top-level fields, ``schema_id`` and ``identifier_field_ids``."""

    fields: tuple[NestedField, ...] = ()
    schema_id: int = 0
    identifier_field_ids: tuple[int, ...] = ()

    def __init__(
        self,
        *columns: NestedField,
        fields: tuple[NestedField, ...] | list[NestedField] = _UNSET,
        schema_id: int = 0,
        identifier_field_ids: tuple[int, ...] | list[int] = (),
    ) -> None:
        # Schema(f1, f2, ...), Schema([f1, f2]) and Schema(fields=...) (which
        # dataclasses.replace uses) are all accepted; __post_init__ checks the result.
        if fields is _UNSET:
            if len(columns) == 1 and isinstance(columns[0], (tuple, list)):
                fields = tuple(columns[0])
            else:
                fields = columns
        elif columns:
            raise InvalidSchemaError("give the fields either positionally or as fields=, not both")
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "schema_id", schema_id)
        object.__setattr__(self, "identifier_field_ids", identifier_field_ids)
        self.__post_init__()

    def __post_init__(self) -> None:
        # First: the checks below recurse once per level.
        too_deep = too_deeply_nested(self.fields)
        if too_deep is not None:
            raise nesting_error(f"schema {self.schema_id}: field {too_deep!r}")
        seen: dict[int, str] = {}
        names: set[str] = set()
        for name, f in _walk(self.as_struct(), ()):
            if name in names:
                # Java: "Invalid schema: multiple fields for name".
                raise InvalidSchemaError(
                    f"schema {self.schema_id}: more than one field is named {name!r}"
                )
            names.add(name)
            if f.field_id in seen:
                raise InvalidSchemaError(
                    f"schema {self.schema_id}: duplicate field id {f.field_id} "
                    f"({seen[f.field_id]!r} and {name!r})"
                )
            if f.field_id > MAX_FIELD_ID:
                raise InvalidSchemaError(
                    f"schema {self.schema_id}: field {name!r} uses id {f.field_id}, in the range "
                    f"reserved for metadata columns (ids must be <= {MAX_FIELD_ID})"
                )
            seen[f.field_id] = name
            for kind, raw in (
                ("initial-default", f.initial_default),
                ("write-default", f.write_default),
            ):
                if raw is not None:
                    try:
                        check_default(f, kind, raw)
                    except InvalidSchemaError:
                        raise
                    except InvalidMetadataError as error:
                        raise InvalidSchemaError(f"schema {self.schema_id}: {error}") from None
            if f.required and isinstance(f.field_type, UnknownType):
                # v3 `unknown` columns are always null (Java refuses a required one).
                raise InvalidSchemaError(
                    f"schema {self.schema_id}: field {name!r} of type unknown must be optional"
                )
        self._check_identifier_fields()

    # --- identifier fields (spec: "Identifier Field IDs") -------------------------------------

    def _check_identifier_fields(self) -> None:
        if len(set(self.identifier_field_ids)) != len(self.identifier_field_ids):
            raise InvalidSchemaError(
                f"schema {self.schema_id}: duplicate identifier field ids "
                f"{list(self.identifier_field_ids)}"
            )
        for field_id in self.identifier_field_ids:
            f = self._by_id.get(field_id)
            if f is None:
                raise InvalidSchemaError(
                    f"schema {self.schema_id}: identifier field id {field_id} is not in the schema"
                )
            name = self._name_by_id[field_id]
            if not isinstance(f.field_type, PrimitiveType):
                raise InvalidSchemaError(
                    f"identifier field {name!r} ({field_id}) must be a primitive, "
                    f"not {f.field_type}"
                )
            if isinstance(f.field_type, (FloatType, DoubleType)):
                raise InvalidSchemaError(
                    f"identifier field {name!r} ({field_id}) cannot be {f.field_type}"
                )
            if not f.required:
                raise InvalidSchemaError(
                    f"identifier field {name!r} ({field_id}) must be required, not optional"
                )
            for parent_id in self._parents(field_id):
                parent = self._by_id[parent_id]
                if isinstance(parent.field_type, (ListType, MapType)):
                    raise InvalidSchemaError(
                        f"identifier field {name!r} ({field_id}) cannot be nested in "
                        f"{'a list' if isinstance(parent.field_type, ListType) else 'a map'} "
                        f"({self._name_by_id[parent_id]!r})"
                    )
                if not parent.required:
                    raise InvalidSchemaError(
                        f"identifier field {name!r} ({field_id}) cannot be nested in the "
                        f"optional struct {self._name_by_id[parent_id]!r}"
                    )

    # --- indexes ------------------------------------------------------------------------------

    @functools.cached_property
    def _index(self) -> tuple[dict[int, NestedField], dict[int, str], dict[int, int]]:
        by_id: dict[int, NestedField] = {}
        names: dict[int, str] = {}
        parents: dict[int, int] = {}

        def visit(t: IcebergType, prefix: tuple[str, ...], parent: int | None) -> None:
            for child in t.child_fields():
                by_id[child.field_id] = child
                path = (*prefix, child.name)
                names[child.field_id] = ".".join(path)
                if parent is not None:
                    parents[child.field_id] = parent
                visit(child.field_type, path, child.field_id)

        visit(self.as_struct(), (), None)
        return by_id, names, parents

    @property
    def _by_id(self) -> dict[int, NestedField]:
        return self._index[0]

    @property
    def _name_by_id(self) -> dict[int, str]:
        return self._index[1]

    def _parents(self, field_id: int) -> list[int]:
        """Ids of the enclosing fields, innermost first."""
        out = []
        parents = self._index[2]
        while field_id in parents:
            field_id = parents[field_id]
            out.append(field_id)
        return out

    @functools.cached_property
    def _names(self) -> dict[str, int]:
        """Full dotted names, plus Java's short aliases that skip ``element`` and ``value``
        of lists and maps of structs (``points.x`` for ``points.element.x``)."""
        index: dict[str, int] = {}
        short: dict[str, int] = {}

        def visit(t: IcebergType, full: tuple[str, ...], alias: tuple[str, ...]) -> None:
            for child in t.child_fields():
                full_path = (*full, child.name)
                index[".".join(full_path)] = child.field_id
                skip = (
                    isinstance(t, (ListType, MapType))
                    and child.name in ("element", "value")
                    and isinstance(child.field_type, StructType)
                )
                alias_path = alias if skip else (*alias, child.name)
                if not skip and alias_path != full_path:
                    short.setdefault(".".join(alias_path), child.field_id)
                visit(child.field_type, full_path, alias_path)

        visit(self.as_struct(), (), ())
        for name, field_id in short.items():
            index.setdefault(name, field_id)
        return index

    @functools.cached_property
    def _lower_names(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for name, field_id in self._names.items():
            ids = index.setdefault(name.lower(), [])
            if field_id not in ids:
                ids.append(field_id)
        return index

    @functools.cached_property
    def _positions(self) -> dict[int, tuple[int, ...]]:
        index: dict[int, tuple[int, ...]] = {}

        def visit(struct: StructType, prefix: tuple[int, ...]) -> None:
            for position, child in enumerate(struct.fields):
                path = (*prefix, position)
                index[child.field_id] = path
                if isinstance(child.field_type, StructType):
                    visit(child.field_type, path)

        visit(self.as_struct(), ())
        return index

    # --- public API -----------------------------------------------------------------------------

    def as_struct(self) -> StructType:
        return StructType(self.fields)

    @property
    def columns(self) -> tuple[NestedField, ...]:
        return self.fields

    def find_field(self, key: int | str, case_sensitive: bool = True) -> NestedField | None:
        """The field with this id, or with this dotted name (``"location.lat"``), or None.

        Case-insensitive lookup raises :class:`UnknownFieldError` when the name is ambiguous.
        """
        if isinstance(key, bool):
            raise UnknownFieldError(f"not a field id or name: {key!r}")
        if isinstance(key, int):
            return self._by_id.get(key)
        field_id = self.find_field_id(key, case_sensitive)
        return None if field_id is None else self._by_id[field_id]

    def find_field_id(self, name: str, case_sensitive: bool = True) -> int | None:
        if case_sensitive:
            return self._names.get(name)
        ids = self._lower_names.get(name.lower(), [])
        if len(ids) > 1:
            names = sorted(self._name_by_id[i] for i in ids)
            raise UnknownFieldError(f"ambiguous case-insensitive name {name!r}: matches {names}")
        return ids[0] if ids else None

    def field(self, key: int | str, case_sensitive: bool = True) -> NestedField:
        """Like :meth:`find_field` but raises :class:`UnknownFieldError` when missing."""
        found = self.find_field(key, case_sensitive)
        if found is None:
            kind = "id" if isinstance(key, int) else "name"
            raise UnknownFieldError(f"schema {self.schema_id} has no field with {kind} {key!r}")
        return found

    def find_type(self, key: int | str, case_sensitive: bool = True) -> IcebergType | None:
        found = self.find_field(key, case_sensitive)
        return None if found is None else found.field_type

    def find_column_name(self, field_id: int) -> str | None:
        """The full dotted name of a field id (``"points.element.x"``), or None."""
        return self._name_by_id.get(field_id)

    def parent_ids(self, field_id: int) -> tuple[int, ...]:
        """Ids of the fields enclosing ``field_id``, outermost first."""
        return tuple(reversed(self._parents(field_id)))

    def position_path(self, field_id: int) -> tuple[int, ...] | None:
        """Positions from the top-level struct down to the field, through structs only
        (``(2, 0)`` is the first field of the third column). None for a field that is not
        reachable through structs alone (one inside a list or map) or not in the schema."""
        return self._positions.get(field_id)

    @property
    def position_paths(self) -> dict[int, tuple[int, ...]]:
        return dict(self._positions)

    def field_ids(self) -> frozenset[int]:
        return frozenset(self._by_id)

    def all_fields(self) -> Iterator[tuple[str, NestedField]]:
        """Every field (including list elements and map keys/values), with its full name,
        depth first in schema order."""
        yield from _walk(self.as_struct(), ())

    def highest_field_id(self) -> int:
        return max(self._by_id, default=0)

    @property
    def identifier_field_names(self) -> tuple[str, ...]:
        return tuple(self._name_by_id[i] for i in self.identifier_field_ids)

    def min_format_version(self) -> int:
        """The first table format version that can hold this schema: 3 when it uses a v3 type
        or a non-null default value (spec: Appendix E), else 1."""
        version = 1
        for _, f in self.all_fields():
            version = max(version, f.field_type.min_format_version)
            if f.initial_default is not None or f.write_default is not None:
                version = max(version, 3)
        return version

    def check_format_version(self, format_version: int) -> None:
        """Raise :class:`InvalidSchemaError` if a table of ``format_version`` cannot hold this
        schema."""
        for name, f in self.all_fields():
            if f.field_type.min_format_version > format_version:
                raise InvalidSchemaError(
                    f"schema {self.schema_id}: field {name!r} has type {f.field_type}, which "
                    f"needs format version {f.field_type.min_format_version} "
                    f"(table is v{format_version})"
                )
            if format_version < 3:
                for kind, value in (
                    ("initial-default", f.initial_default),
                    ("write-default", f.write_default),
                ):
                    if value is not None:
                        raise InvalidSchemaError(
                            f"schema {self.schema_id}: field {name!r} has a non-null {kind}, "
                            f"which needs format version 3 (table is v{format_version})"
                        )

    def __str__(self) -> str:
        body = "\n".join(f"  {f}" for f in self.fields)
        return f"table {{\n{body}\n}}"

    # --- JSON -----------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Appendix C schema JSON, as Java writes it (``identifier-field-ids`` when non-empty)."""
        out: dict[str, Any] = {"type": "struct", "schema-id": self.schema_id}
        if self.identifier_field_ids:
            out["identifier-field-ids"] = list(self.identifier_field_ids)
        out["fields"] = [field_to_json(f) for f in self.fields]
        return out

    @classmethod
    def from_json(cls, node: Any) -> Schema:
        """Read a schema object; a missing ``schema-id`` (v1) reads as 0."""
        obj = js.as_object(node, "schema")
        what = "schema"
        if obj.get("type") != "struct":
            raise InvalidSchemaError(
                f"cannot read a schema: 'type' must be \"struct\", got {js._show(obj.get('type'))}"
            )
        schema_id = js.opt_int(obj, "schema-id", what)
        what = f"schema {schema_id if schema_id is not None else 0}"
        struct = type_from_json(obj, what)
        assert isinstance(struct, StructType)
        ids: tuple[int, ...] = ()
        if obj.get("identifier-field-ids") is not None:
            ids = js.get_int_list(obj, "identifier-field-ids", what)
        return cls(
            fields=struct.fields,
            schema_id=schema_id if schema_id is not None else 0,
            identifier_field_ids=ids,
        )


def _walk(t: IcebergType, prefix: tuple[str, ...]) -> Iterator[tuple[str, NestedField]]:
    for child in t.child_fields():
        path = (*prefix, child.name)
        yield ".".join(path), child
        yield from _walk(child.field_type, path)
