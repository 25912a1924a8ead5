"""Union by name for :class:`frazil.table.update_schema.UpdateSchema` (Java:
``UnionByNameVisitor``).

Fields of the other schema are matched to the current schema by name, level by level. A missing
field is added as an optional column (with fresh ids); a matching primitive is promoted when the
other schema's type is a promotion of it and kept when it is narrower (a no-op, as in Java);
any other type difference is refused by ``update_column``. A required field that the other
schema has as optional becomes optional, and a doc given by the other schema is taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frazil.errors import InvalidUpdateError
from frazil.schema import Schema
from frazil.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

if TYPE_CHECKING:
    from frazil.table.update_schema import UpdateSchema

__all__ = ["union_by_name"]


def union_by_name(update: UpdateSchema, current: Schema, other: Schema) -> None:
    _struct(update, current.as_struct(), other.as_struct(), ())


def _struct(
    update: UpdateSchema, current: StructType, other: StructType, path: tuple[str, ...]
) -> None:
    for field in other.fields:
        existing = current.field_by_name(field.name)
        if existing is None:
            update.add_column((*path, field.name), field.field_type, field.doc)
        else:
            _field(update, existing, field, (*path, field.name))


def _field(
    update: UpdateSchema, existing: NestedField, new: NestedField, path: tuple[str, ...]
) -> None:
    _type(update, existing.field_type, new.field_type, path)
    if existing.required and not new.required:
        update.make_column_optional(path)
    if new.doc is not None and new.doc != existing.doc:
        update.update_column(path, doc=new.doc)


def _type(
    update: UpdateSchema, existing: IcebergType, new: IcebergType, path: tuple[str, ...]
) -> None:
    from frazil.table.update_schema import is_promotion_allowed

    name = ".".join(path)
    if isinstance(existing, StructType) and isinstance(new, StructType):
        _struct(update, existing, new, path)
    elif isinstance(existing, ListType) and isinstance(new, ListType):
        _field(update, existing.element_field, new.element_field, (*path, "element"))
    elif isinstance(existing, MapType) and isinstance(new, MapType):
        if existing.key_type != new.key_type:
            raise InvalidUpdateError(
                f"cannot union map {name!r}: keys {existing.key_type} and {new.key_type} differ "
                "(map keys cannot change)"
            )
        _field(update, existing.value_field, new.value_field, (*path, "value"))
    elif isinstance(existing, PrimitiveType) and isinstance(new, PrimitiveType):
        if existing == new or is_promotion_allowed(new, existing):
            return  # the same, or narrower than what the table has: nothing to do
        update.update_column(path, field_type=new)
    elif existing != new:
        raise InvalidUpdateError(
            f"cannot union column {name!r}: {existing} and {new} are different kinds of type"
        )
