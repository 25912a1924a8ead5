"""Partition specs (spec: "Partitioning", "Partition Evolution", Appendix C "Partition Specs").

Transforms are kept as their Appendix C strings. A string that names a transform
of the spec (``identity``, ``bucket[N]``, ``truncate[W]``, ``year``, ``month``,
``day``, ``hour``, ``void``; case-insensitive, as Java reads them) is parsed by
:class:`frazil.transforms.Transform` when the field is built, so a bad parameter
such as ``bucket[0]`` is refused at once and the string is stored in canonical
form. Any other string (``zorder``, a transform of a newer spec) is an *unknown
transform*: like Java, frazil keeps it, reads and writes it unchanged, and
refuses only when it must be evaluated (:attr:`PartitionField.transform_model`,
:meth:`PartitionSpec.partition_type`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from frazil import _jsonutil as js
from frazil import _native
from frazil._checked import checked
from frazil.errors import (
    InvalidMetadataError,
    UnsupportedTransformError,
)
from frazil.transforms import Transform
from frazil.types import (
    IcebergType,
    ListType,
    MapType,
    PrimitiveType,
    StructType,
    parse_type,
    type_from_json,
    type_to_json,
)

if TYPE_CHECKING:
    from frazil.schema import Schema

__all__ = [
    "PARTITION_DATA_ID_START",
    "PartitionField",
    "PartitionSpec",
    "canonical_transform",
    "check_transform_source",
    "is_known_transform",
    "transform_result_type",
]

# Spec: "Partition Evolution": v1 writers assigned partition field ids from 1000.
PARTITION_DATA_ID_START = 1000

_PLAIN = ("identity", "year", "month", "day", "hour", "void")
_WITH_PARAMETER = re.compile(r"(\w+)\[(.*)\]", re.DOTALL)


def is_known_transform(text: str) -> bool:
    """Whether ``text`` names a transform of the spec (else it is kept as unknown).

    ``bucket[...]`` and ``truncate[...]`` count as known whatever the brackets hold, so a
    malformed parameter (``bucket[x]``, ``bucket[-3]``) is refused rather than kept; Java would
    keep it as an unknown transform, but no engine writes one and it can only be a mistake.
    """
    match = _WITH_PARAMETER.fullmatch(text)
    if match:
        return match.group(1).lower() in ("bucket", "truncate")
    return text.lower() in _PLAIN


def canonical_transform(text: str) -> str:
    """The canonical string of a known transform (refusing a bad one such as ``bucket[0]``
    with InvalidTransformError); an unknown transform string unchanged."""
    if not isinstance(text, str):
        raise InvalidMetadataError(f"a transform must be a string, got {text!r}")
    if is_known_transform(text):
        return str(Transform(text.lower()))
    return text


def _model(text: str) -> Transform:
    if not is_known_transform(text):
        raise UnsupportedTransformError(
            f"transform {text!r} is not known to frazil (written by a newer engine?); it is kept "
            "as read but cannot be evaluated"
        )
    return Transform(text.lower())


def _type_text(t: IcebergType) -> str:
    """A type as the Appendix C JSON text the native core parses (any type)."""
    return json.dumps(type_to_json(t))


def _applies(transform: Transform, source: IcebergType) -> bool:
    # The transform table is the Rust core's (one owner of the spec's rules).
    return bool(_native.transform_applies(str(transform), _type_text(source)))


def check_transform_source(transform: str, source: IcebergType, what: str) -> None:
    """Raise UnsupportedTransformError if a known ``transform`` cannot apply to ``source``."""
    if not is_known_transform(transform):
        return  # unknown transforms are assumed to apply, as Java does
    if not _applies(_model(transform), source):
        raise UnsupportedTransformError(
            f"{what}: transform {transform} cannot be applied to {source}"
        )


def transform_result_type(transform: str, source: IcebergType) -> IcebergType:
    """The type of the values ``transform`` produces from ``source`` (spec: Partition
    Transforms), as frazil's Rust core types it: ``day`` gives ``date`` (the spec's table
    says ``int``; Java types day values as dates, and so do manifests frazil and Java
    write), ``void`` over a non-primitive source gives ``unknown``. Refuses unknown
    transforms and unsupported sources."""
    model = _model(transform)
    if not _applies(model, source):
        raise UnsupportedTransformError(f"transform {transform} cannot be applied to {source}")
    return parse_type(_native.transform_result_type(str(model), _type_text(source)))


@dataclass(frozen=True)
@checked(also={"transform": (Transform,)})
class PartitionField:
    """One field of a partition spec: source column id, partition field id, transform, name."""

    source_id: int
    field_id: int
    transform: str
    name: str

    def __post_init__(self) -> None:
        transform = self.transform
        if isinstance(transform, Transform):
            transform = str(transform)
        object.__setattr__(self, "transform", canonical_transform(transform))

    @property
    def is_known_transform(self) -> bool:
        return is_known_transform(self.transform)

    @property
    def transform_model(self) -> Transform:
        """The transform as a :class:`frazil.transforms.Transform`; raises
        UnsupportedTransformError for an unknown transform."""
        return _model(self.transform)

    def to_json(self) -> dict[str, Any]:
        # Java's key order.
        return {
            "name": self.name,
            "transform": self.transform,
            "source-id": self.source_id,
            "field-id": self.field_id,
        }

    def __str__(self) -> str:
        return f"{self.field_id}: {self.name}: {self.transform}({self.source_id})"


_UNSET: Any = object()


def id_and_fields(
    what: str,
    field_class: type,
    args: tuple[Any, ...],
    id_name: str,
    id_value: Any,
    fields: Any,
) -> tuple[Any, Any]:
    """The id and fields of a spec or sort order from its constructor's arguments, in either
    form: pyiceberg's, fields positional and the id by keyword (``PartitionSpec(field,
    spec_id=1)``), or frazil's, the id first (``PartitionSpec(1, (field,))``). Types are
    checked afterwards, by the class."""
    if args and isinstance(args[0], field_class):
        if fields is not _UNSET:
            raise InvalidMetadataError(
                f"{what}: give the fields positionally or as fields=, not both"
            )
        return id_value, args
    if len(args) > 2:
        raise InvalidMetadataError(
            f"{what}: expected the fields positionally ({field_class.__name__} objects) or "
            f"({id_name}, fields), got {len(args)} positional arguments"
        )
    if args:
        if id_value is not _UNSET:
            raise InvalidMetadataError(f"{what}: {id_name} given twice")
        id_value = args[0]
    if len(args) == 2:
        if fields is not _UNSET:
            raise InvalidMetadataError(f"{what}: fields given twice")
        fields = args[1]
    return id_value, fields


@dataclass(frozen=True)
@checked
class PartitionSpec:
    """A partition spec: ``spec_id`` and its fields, in order.

    Built as pyiceberg builds one, ``PartitionSpec(field, ..., spec_id=0)``, or with the id
    first, ``PartitionSpec(0, (field, ...))``; ``spec_id`` must be an int."""

    spec_id: int = 0
    fields: tuple[PartitionField, ...] = ()

    @overload
    def __init__(self, *fields: PartitionField, spec_id: int = 0) -> None: ...
    @overload
    def __init__(self, spec_id: int = 0, fields: Iterable[PartitionField] = ()) -> None: ...

    def __init__(self, *args: Any, spec_id: Any = _UNSET, fields: Any = _UNSET) -> None:
        spec_id, fields = id_and_fields(
            "partition spec", PartitionField, args, "spec_id", spec_id, fields
        )
        object.__setattr__(self, "spec_id", 0 if spec_id is _UNSET else spec_id)
        object.__setattr__(self, "fields", () if fields is _UNSET else fields)
        self.__post_init__()

    def __post_init__(self) -> None:
        ids: set[int] = set()
        names: set[str] = set()
        for f in self.fields:
            if f.field_id in ids:
                raise InvalidMetadataError(
                    f"partition spec {self.spec_id}: duplicate partition field id {f.field_id}"
                )
            if f.name in names:
                raise InvalidMetadataError(
                    f"partition spec {self.spec_id}: duplicate partition field name {f.name!r}"
                )
            ids.add(f.field_id)
            names.add(f.name)

    @classmethod
    def unpartitioned(cls, spec_id: int = 0) -> PartitionSpec:
        return cls(spec_id, ())

    def is_unpartitioned(self) -> bool:
        """True when no field partitions the data (no fields, or only void transforms)."""
        return all(f.transform == "void" for f in self.fields)

    @property
    def last_assigned_field_id(self) -> int:
        """The highest partition field id, or 999 for an unpartitioned spec (as Java)."""
        return max((f.field_id for f in self.fields), default=PARTITION_DATA_ID_START - 1)

    def field_by_id(self, field_id: int) -> PartitionField | None:
        return next((f for f in self.fields if f.field_id == field_id), None)

    def fields_by_source_id(self, source_id: int) -> tuple[PartitionField, ...]:
        return tuple(f for f in self.fields if f.source_id == source_id)

    def partition_type(self, schema: Schema) -> StructType:
        """The struct of partition values (spec: Manifests, ``partition``): one optional
        field per partition field, typed by its transform's result as frazil's Rust core
        types it (see :func:`transform_result_type`). A field whose source column was
        dropped is ``unknown``, as Java 1.10 types it."""
        for f in self.fields:
            _model(f.transform)  # an unknown transform has no result type
        text = _native.partition_type(json.dumps(self.to_json()), json.dumps(schema.to_json()))
        result = type_from_json(json.loads(text), f"partition type of spec {self.spec_id}")
        if not isinstance(result, StructType):  # pragma: no cover - Rust returns a struct
            raise InvalidMetadataError(f"partition type of spec {self.spec_id} is not a struct")
        return result

    def check_compatible(self, schema: Schema) -> None:
        """Check every field against ``schema`` (spec: Partitioning): the source column exists
        (a ``void`` field may have lost it), is a primitive, is not inside a list or map, and
        the transform applies to its type."""
        for f in self.fields:
            what = f"partition spec {self.spec_id} field {f.name!r}"
            source = schema.find_field(f.source_id)
            if source is None:
                if f.transform == "void":
                    continue
                raise InvalidMetadataError(
                    f"{what}: cannot find source column {f.source_id} in schema {schema.schema_id}"
                )
            if not isinstance(source.field_type, PrimitiveType):
                raise UnsupportedTransformError(
                    f"{what}: source column {f.source_id} ({schema.find_column_name(f.source_id)}) "
                    f"must be a primitive type, not {source.field_type}"
                )
            for parent_id in schema.parent_ids(f.source_id):
                parent = schema.field(parent_id).field_type
                if isinstance(parent, (ListType, MapType)):
                    raise UnsupportedTransformError(
                        f"{what}: source column {schema.find_column_name(f.source_id)!r} is "
                        f"inside a {'list' if isinstance(parent, ListType) else 'map'}"
                    )
            check_transform_source(f.transform, source.field_type, what)

    def to_json(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id, "fields": self.fields_to_json()}

    def fields_to_json(self) -> list[dict[str, Any]]:
        """The fields list alone, as the deprecated v1 ``partition-spec`` holds them."""
        return [f.to_json() for f in self.fields]

    @classmethod
    def from_json(cls, node: Any) -> PartitionSpec:
        obj = js.as_object(node, "partition spec")
        spec_id = js.get_int(obj, "spec-id", "partition spec")
        fields = js.get_list(obj, "fields", f"partition spec {spec_id}")
        return cls.from_json_fields(fields, spec_id)

    @classmethod
    def from_json_fields(cls, node: Any, spec_id: int) -> PartitionSpec:
        """Read a fields list. Fields without ``field-id`` (old v1 writers) get ids from 1000 in
        order (spec: Appendix C); a list where only some fields have one is refused."""
        what = f"partition spec {spec_id}"
        items = js.as_list(node, f"{what} fields")
        with_ids = sum(1 for item in items if isinstance(item, dict) and "field-id" in item)
        if with_ids not in (0, len(items)):
            raise InvalidMetadataError(
                f"{what}: {len(items) - with_ids} of {len(items)} partition fields have no field-id"
            )
        fields = []
        for position, item in enumerate(items):
            obj = js.as_object(item, f"{what} field")
            field_id = (
                js.get_int(obj, "field-id", f"{what} field")
                if with_ids
                else PARTITION_DATA_ID_START + position
            )
            fields.append(
                PartitionField(
                    source_id=js.get_int(obj, "source-id", f"{what} field {field_id}"),
                    field_id=field_id,
                    transform=js.get_str(obj, "transform", f"{what} field {field_id}"),
                    name=js.get_str(obj, "name", f"{what} field {field_id}"),
                )
            )
        return cls(spec_id, tuple(fields))

    def __str__(self) -> str:
        return "[" + ", ".join(str(f) for f in self.fields) + "]"
