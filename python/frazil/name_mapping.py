"""Name mappings (spec: "Column Projection", Appendix C "Name Mapping Serialization").

A name mapping gives field ids to the columns of data files written without
them, by name. It is stored as JSON in the table property
``schema.name-mapping.default``. A name holding a ``.`` is a literal name, not
a path: nested fields have their own mappings under ``fields``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import InvalidMetadataError

if TYPE_CHECKING:
    from frazil.schema import Schema
    from frazil.types import IcebergType

__all__ = ["DEFAULT_NAME_MAPPING_PROPERTY", "MappedField", "NameMapping"]

DEFAULT_NAME_MAPPING_PROPERTY = "schema.name-mapping.default"


def _check_unique(fields: tuple[MappedField, ...], where: str) -> None:
    seen: set[str] = set()
    for f in fields:
        for name in f.names:
            if name in seen:
                raise InvalidMetadataError(f"name mapping{where}: name {name!r} is mapped twice")
            seen.add(name)


@dataclass(frozen=True)
@checked
class MappedField:
    """Names that map to one field id (``field_id`` may be None for columns that exist only in
    data files), with mappings for the field's children (``fields``; None when absent)."""

    names: tuple[str, ...]
    field_id: int | None = None
    fields: tuple[MappedField, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))
        if self.fields is not None:
            object.__setattr__(self, "fields", tuple(self.fields))
            _check_unique(self.fields, f" under {list(self.names)}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.field_id is not None:
            out["field-id"] = self.field_id
        out["names"] = list(self.names)
        if self.fields is not None:
            out["fields"] = [f.to_json() for f in self.fields]
        return out

    @classmethod
    def from_json(cls, node: Any) -> MappedField:
        obj = js.as_object(node, "name mapping field")
        # The spec's table says `field_id` while its example and Java use `field-id`; read both.
        key = "field-id" if "field-id" in obj else "field_id"
        field_id = js.opt_int(obj, key, "name mapping field")
        names = js.get_str_list(obj, "names", "name mapping field") if "names" in obj else ()
        fields = None
        if obj.get("fields") is not None:
            fields = tuple(
                cls.from_json(f) for f in js.as_list(obj["fields"], "name mapping fields")
            )
        return cls(names, field_id, fields)


@dataclass(frozen=True)
@checked
class NameMapping:
    """A list of top-level field mappings."""

    fields: tuple[MappedField, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        _check_unique(self.fields, "")

    def find(self, *path: str) -> MappedField | None:
        """The mapping for a path of names (``find("location", "lat")``), or None."""
        fields: tuple[MappedField, ...] | None = self.fields
        found = None
        for name in path:
            found = next((f for f in fields or () if name in f.names), None)
            if found is None:
                return None
            fields = found.fields
        return found

    def field_id(self, path: Sequence[str]) -> int | None:
        found = self.find(*path)
        return None if found is None else found.field_id

    def to_json(self) -> str:
        return json.dumps([f.to_json() for f in self.fields])

    @classmethod
    def from_json(cls, text: str | list[Any]) -> NameMapping:
        """Read a mapping from its JSON text (the property's value) or parsed JSON list."""
        node = js.parse_json(text, "name mapping") if isinstance(text, (str, bytes)) else text
        items = js.as_list(node, "name mapping")
        try:
            return cls(tuple(MappedField.from_json(item) for item in items))
        except RecursionError:
            raise js.too_deep("name mapping") from None

    @classmethod
    def from_schema(cls, schema: Schema) -> NameMapping:
        """A mapping of each field's current name to its id (Java: MappingUtil.create)."""
        return cls(_mapped(schema.as_struct()) or ())


def _mapped(t: IcebergType) -> tuple[MappedField, ...] | None:
    children = t.child_fields()
    if not children:
        return None
    return tuple(MappedField((f.name,), f.field_id, _mapped(f.field_type)) for f in children)
