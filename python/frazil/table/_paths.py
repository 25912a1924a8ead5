"""Column paths and the rebuilding of a schema's structs for :mod:`frazil.table.update_schema`.

The rebuild follows Java's ``SchemaUpdate.ApplyChanges``: deleted fields are dropped, updated
fields replaced (keeping their rebuilt nested types), added fields appended to their struct, then
moves applied in the order they were asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from frazil.errors import InvalidUpdateError
from frazil.types import IcebergType, ListType, MapType, NestedField, StructType

__all__ = ["ROOT", "Path", "find_by_path", "rebuild_struct", "split_path"]

# The parent id of top-level columns (Java: TABLE_ROOT_ID).
ROOT = -1

Path = str | tuple[str, ...]

Move = tuple[str, int, int]


def split_path(path: Path) -> tuple[Path | None, str]:
    """(parent, new name) of a column path: a tuple of names splits off its last name, a dotted
    string splits at its last dot (the parent stays a dotted name). The parent is None for a
    top-level column."""
    parent: Path | None
    if isinstance(path, str):
        head, _, name = path.rpartition(".")
        parent = head or None
    elif isinstance(path, tuple) and path and all(isinstance(p, str) for p in path):
        parent, name = (path[:-1] or None), path[-1]
    else:
        raise InvalidUpdateError(f"a column path must be a str or a tuple of str, got {path!r}")
    if not name:
        raise InvalidUpdateError(f"a column name cannot be empty (path {path!r})")
    return parent, name


def child_path(parent: Path, name: str) -> Path:
    return f"{parent}.{name}" if isinstance(parent, str) else (*parent, name)


def path_name(path: Path) -> str:
    return path if isinstance(path, str) else ".".join(path)


def find_by_path(
    struct: StructType, path: tuple[str, ...], case_sensitive: bool
) -> NestedField | None:
    """The field at a tuple of names, walking structs, lists (``element``) and maps (``key``,
    ``value``); a list's element or map's value struct may also be skipped, as in Java's short
    names. Names are matched whole, so they may contain dots."""

    def same(a: str, b: str) -> bool:
        return a == b if case_sensitive else a.lower() == b.lower()

    current: IcebergType = struct
    found: NestedField | None = None
    for name in path:
        children = current.child_fields()
        found = next((c for c in children if same(c.name, name)), None)
        if found is None and isinstance(current, (ListType, MapType)):
            inner = current.child_fields()[-1]
            if isinstance(inner.field_type, StructType):
                found = inner.field_type.field_by_name(name, case_sensitive)
        if found is None:
            return None
        current = found.field_type
    return found


def rebuild_struct(
    fields: Sequence[NestedField],
    parent_id: int,
    deletes: set[int],
    updates: Mapping[int, NestedField],
    adds: Mapping[int, list[int]],
    moves: Mapping[int, list[Move]],
) -> tuple[NestedField, ...]:
    out: list[NestedField] = []
    for f in fields:
        if f.field_id in deletes:
            continue
        updated = updates.get(f.field_id, f)
        # A promotion replaces a primitive type; a nested type keeps its own (rebuilt) type.
        base_type = updated.field_type if updated.field_type != f.field_type else f.field_type
        new_type = _rebuild_type(base_type, f.field_id, deletes, updates, adds, moves)
        out.append(dataclasses.replace(updated, field_type=new_type))
    out.extend(updates[i] for i in adds.get(parent_id, ()))
    for kind, field_id, ref_id in moves.get(parent_id, ()):
        positions = {f.field_id: i for i, f in enumerate(out)}
        for moved in (field_id, ref_id) if kind != "first" else (field_id,):
            if moved not in positions:
                raise InvalidUpdateError(
                    f"cannot move field {field_id} {kind} field {ref_id}: field {moved} is "
                    "being deleted"
                )
        moving = out.pop(positions[field_id])
        if kind == "first":
            out.insert(0, moving)
        else:
            index = next(i for i, f in enumerate(out) if f.field_id == ref_id)
            out.insert(index if kind == "before" else index + 1, moving)
    seen: set[str] = set()
    for f in out:
        if f.name in seen:
            raise InvalidUpdateError(
                f"the schema would have two fields named {f.name!r} in the same struct"
            )
        seen.add(f.name)
    return tuple(out)


def _rebuild_type(
    t: IcebergType,
    field_id: int,
    deletes: set[int],
    updates: Mapping[int, NestedField],
    adds: Mapping[int, list[int]],
    moves: Mapping[int, list[Move]],
) -> IcebergType:
    if isinstance(t, StructType):
        return StructType(rebuild_struct(t.fields, field_id, deletes, updates, adds, moves))
    if isinstance(t, ListType):
        element = updates.get(t.element_id, t.element_field)
        element_type = _rebuild_type(
            element.field_type, t.element_id, deletes, updates, adds, moves
        )
        return ListType(t.element_id, element_type, element.required)
    if isinstance(t, MapType):
        value = updates.get(t.value_id, t.value_field)
        value_type = _rebuild_type(value.field_type, t.value_id, deletes, updates, adds, moves)
        return MapType(t.key_id, t.key_type, t.value_id, value_type, value.required)
    return t
