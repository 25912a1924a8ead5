"""Keeping the table's default name mapping in step with schema evolution (Java:
``SchemaUpdate`` updates ``schema.name-mapping.default`` through ``MappingUtil.update``).

A renamed field keeps its old names and gains the new one (data files written before the rename
still carry the old name); an added field gets a mapping of its own name, nested fields
included; a name given to another field in the same struct is taken from the field that had
it. Deleted fields stay mapped, as in Java.
"""

from __future__ import annotations

from collections.abc import Mapping

from frazil.name_mapping import MappedField, NameMapping
from frazil.schema import Schema
from frazil.table._paths import ROOT
from frazil.types import NestedField

__all__ = ["update_name_mapping"]


class _Updater:
    def __init__(self, updates: Mapping[int, NestedField], adds: Mapping[int, list[int]]) -> None:
        self.updates = updates
        self.adds = adds

    def fields(self, fields: tuple[MappedField, ...]) -> tuple[MappedField, ...]:
        results = [self.field(f) for f in fields]
        assignments = {
            self.updates[f.field_id].name: f.field_id
            for f in results
            if f.field_id is not None and f.field_id in self.updates
        }
        return tuple(_without_reassigned(f, assignments) for f in results)

    def field(self, f: MappedField) -> MappedField:
        names = list(f.names)
        update = self.updates.get(f.field_id) if f.field_id is not None else None
        if update is not None and update.name not in names:
            names.append(update.name)
        nested = self.fields(f.fields) if f.fields is not None else None
        if f.field_id is not None:
            nested = self.add_new(nested, f.field_id)
        return MappedField(tuple(names), f.field_id, nested)

    def add_new(
        self, fields: tuple[MappedField, ...] | None, parent_id: int
    ) -> tuple[MappedField, ...] | None:
        added = [self.updates[i] for i in self.adds.get(parent_id, ())]
        if not added:
            return fields
        new = tuple(NameMapping.from_schema(Schema(a)).fields[0] for a in added)
        if not fields:
            return new
        assignments = {a.name: a.field_id for a in added}
        return tuple(_without_reassigned(f, assignments) for f in fields) + new


def _without_reassigned(f: MappedField, assignments: Mapping[str, int]) -> MappedField:
    names = tuple(n for n in f.names if assignments.get(n, f.field_id) == f.field_id)
    return f if names == f.names else MappedField(names, f.field_id, f.fields)


def update_name_mapping(
    mapping: NameMapping, updates: Mapping[int, NestedField], adds: Mapping[int, list[int]]
) -> NameMapping:
    updater = _Updater(updates, adds)
    return NameMapping(updater.add_new(updater.fields(mapping.fields), ROOT) or ())
