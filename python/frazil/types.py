"""Iceberg data types (spec: "Schemas and Data Types"; JSON form: Appendix C).

Types are immutable values: two ``DecimalType(9, 2)`` compare equal, and every
type prints as its Appendix C type string (``str(DecimalType(9, 2))`` is
``"decimal(9, 2)"``, the form Apache Iceberg Java writes).

Besides the v1/v2 primitives this module reads the v3 types Java may write:
``timestamp_ns``, ``timestamptz_ns``, ``unknown``, ``variant``, ``geometry(C)``
and ``geography(C, A)``. They parse, print and round-trip through JSON; a table
of format version 1 or 2 that uses one is refused by :mod:`frazil.schema`
(they need v3), and code that cannot process one (a partition transform on
``variant``, say) refuses it where it is evaluated.

Default values (``initial-default``, ``write-default``, spec: "Default values")
are kept in their JSON single-value form (Appendix D), exactly as read.
"""

from __future__ import annotations

import functools
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, ClassVar

from frazil import _jsonutil as js
from frazil import _native
from frazil._checked import checked
from frazil.errors import FrazilError, InvalidMetadataError, InvalidSchemaError, UnknownTypeError

__all__ = [
    "MAX_NESTING_DEPTH",
    "BinaryType",
    "BooleanType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FixedType",
    "FloatType",
    "GeographyType",
    "GeometryType",
    "IcebergType",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "NestedField",
    "PrimitiveType",
    "StringType",
    "StructType",
    "TimeType",
    "TimestampNanoType",
    "TimestampType",
    "TimestamptzNanoType",
    "TimestamptzType",
    "UUIDType",
    "UnknownType",
    "VariantType",
    "default_json",
    "optional",
    "parse_type",
    "required",
    "type_from_json",
    "type_to_json",
]

MAX_DECIMAL_PRECISION = 38

# The deepest a schema's types may nest (struct, list and map types one inside another, the
# top-level field's type being level 1): the Rust core's limit, whose reason is given at
# MAX_NESTING_DEPTH in src/spec/types.rs (pyarrow cannot receive deeper types).
MAX_NESTING_DEPTH: int = _native.MAX_NESTING_DEPTH


class IcebergType:
    """Base of every Iceberg type."""

    # The first table format version that allows this type (spec: Appendix E, v3).
    min_format_version: ClassVar[int] = 1

    @property
    def is_primitive(self) -> bool:
        return False

    @property
    def is_nested(self) -> bool:
        return False

    def child_fields(self) -> tuple[NestedField, ...]:
        """The fields one level down: struct fields, a list's element, a map's key and value."""
        return ()

    def to_json(self) -> Any:
        return type_to_json(self)


@dataclass(frozen=True)
class PrimitiveType(IcebergType):
    """A primitive type; ``str()`` gives its Appendix C type string.

    The types without parameters (boolean ... unknown) derive from :class:`_Parameterless`
    rather than being dataclasses of their own: each dataclass costs ~0.3 ms of import time."""

    type_name: ClassVar[str] = ""

    @property
    def is_primitive(self) -> bool:
        return True

    def __str__(self) -> str:
        return self.type_name

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _Parameterless(PrimitiveType):
    """A primitive type without parameters: equal to every instance of its class (the
    dataclass ``__eq__`` and ``__hash__`` it inherits) and, like a frozen dataclass,
    immutable."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class BooleanType(_Parameterless):
    type_name = "boolean"


class IntegerType(_Parameterless):
    type_name = "int"


class LongType(_Parameterless):
    type_name = "long"


class FloatType(_Parameterless):
    type_name = "float"


class DoubleType(_Parameterless):
    type_name = "double"


class DateType(_Parameterless):
    type_name = "date"


class TimeType(_Parameterless):
    type_name = "time"


class TimestampType(_Parameterless):
    type_name = "timestamp"


class TimestamptzType(_Parameterless):
    type_name = "timestamptz"


class TimestampNanoType(_Parameterless):
    type_name = "timestamp_ns"
    min_format_version = 3


class TimestamptzNanoType(_Parameterless):
    type_name = "timestamptz_ns"
    min_format_version = 3


class StringType(_Parameterless):
    type_name = "string"


class UUIDType(_Parameterless):
    type_name = "uuid"


class BinaryType(_Parameterless):
    type_name = "binary"


class UnknownType(_Parameterless):
    """v3 ``unknown``: a column whose type is not known yet; always null."""

    type_name = "unknown"
    min_format_version = 3


@dataclass(frozen=True)
@checked
class DecimalType(PrimitiveType):
    precision: int
    scale: int

    type_name = "decimal"

    def __post_init__(self) -> None:
        if not 0 < self.precision <= MAX_DECIMAL_PRECISION:
            raise UnknownTypeError(
                f"decimal({self.precision}, {self.scale}): precision must be between 1 and "
                f"{MAX_DECIMAL_PRECISION}"
            )
        if not 0 <= self.scale <= self.precision:
            raise UnknownTypeError(
                f"decimal({self.precision}, {self.scale}): the scale must be between 0 and the "
                "precision"
            )

    def __str__(self) -> str:
        return f"decimal({self.precision}, {self.scale})"


@dataclass(frozen=True)
@checked
class FixedType(PrimitiveType):
    length: int

    type_name = "fixed"

    def __post_init__(self) -> None:
        if self.length < 0:
            raise UnknownTypeError(f"fixed[{self.length}]: negative length")

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


_DEFAULT_CRS = "OGC:CRS84"
_EDGE_ALGORITHMS = ("spherical", "vincenty", "thomas", "andoyer", "karney")


@dataclass(frozen=True)
@checked
class GeometryType(PrimitiveType):
    """v3 ``geometry(C)``; the CRS defaults to OGC:CRS84 as in Java."""

    crs: str = _DEFAULT_CRS

    type_name = "geometry"
    min_format_version = 3

    def __str__(self) -> str:
        return f"geometry({self.crs})"


@dataclass(frozen=True)
@checked
class GeographyType(PrimitiveType):
    """v3 ``geography(C, A)``; defaults OGC:CRS84 and spherical as in Java."""

    crs: str = _DEFAULT_CRS
    algorithm: str = "spherical"

    type_name = "geography"
    min_format_version = 3

    def __post_init__(self) -> None:
        if self.algorithm not in _EDGE_ALGORITHMS:
            raise UnknownTypeError(
                f"unknown edge algorithm {self.algorithm!r} of geography (one of "
                f"{', '.join(_EDGE_ALGORITHMS)})"
            )

    def __str__(self) -> str:
        return f"geography({self.crs}, {self.algorithm})"


@dataclass(frozen=True)
class VariantType(IcebergType):
    """v3 ``variant``: semi-structured data. Neither primitive nor nested (as in Java)."""

    min_format_version = 3

    def __str__(self) -> str:
        return "variant"

    def __repr__(self) -> str:
        return "VariantType()"


_SIMPLE: dict[str, IcebergType] = {
    t.type_name if isinstance(t, PrimitiveType) else str(t): t
    for t in (
        BooleanType(),
        IntegerType(),
        LongType(),
        FloatType(),
        DoubleType(),
        DateType(),
        TimeType(),
        TimestampType(),
        TimestamptzType(),
        TimestampNanoType(),
        TimestamptzNanoType(),
        StringType(),
        UUIDType(),
        BinaryType(),
        UnknownType(),
        VariantType(),
    )
}


def parse_type(text: str) -> PrimitiveType | VariantType:
    """Parse an Appendix C type string (case-insensitive, as Java reads it).

    The parsing is frazil's Rust core's (the one owner of the type rules), so the
    Python model and the native planner read every type string the same way.
    """
    if not isinstance(text, str):
        raise UnknownTypeError(f"a type string must be a str, got {type(text).__name__}")
    return _parse_type(text)


@functools.lru_cache(maxsize=4096)
def _parse_type(text: str) -> PrimitiveType | VariantType:
    desc = _native.parse_type_string(text)
    kind = desc[0]
    if kind == "decimal":
        return DecimalType(desc[1], desc[2])
    if kind == "fixed":
        return FixedType(desc[1])
    if kind == "geometry":
        return GeometryType(desc[1])
    if kind == "geography":
        return GeographyType(desc[1], desc[2])
    simple = _SIMPLE.get(kind)
    if not isinstance(simple, (PrimitiveType, VariantType)):  # pragma: no cover - Rust's types
        raise UnknownTypeError(f"cannot parse type string {text!r}: unexpected {desc!r}")
    return simple


@dataclass(frozen=True)
@checked
class NestedField:
    """A struct field, list element or map key/value: id, name, type, nullability.

    ``initial_default`` and ``write_default`` hold the default values in their
    JSON single-value form (Appendix D), as read; ``None`` means no default.
    :meth:`initial_default_value` and :meth:`write_default_value` decode them with
    :mod:`frazil.values`; :func:`default_json` encodes a Python value.
    """

    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    initial_default: Any = field(default=None, hash=False)
    write_default: Any = field(default=None, hash=False)

    @property
    def id(self) -> int:
        return self.field_id

    def initial_default_value(self) -> Any:
        """``initial_default`` as a Python value (see :mod:`frazil.values`), or None."""
        return _decode_default(self, "initial-default", self.initial_default)

    def write_default_value(self) -> Any:
        """``write_default`` as a Python value (see :mod:`frazil.values`), or None."""
        return _decode_default(self, "write-default", self.write_default)

    @property
    def optional(self) -> bool:
        return not self.required

    def __str__(self) -> str:
        nullability = "required" if self.required else "optional"
        doc = f" ({self.doc})" if self.doc else ""
        return f"{self.field_id}: {self.name}: {nullability} {self.field_type}{doc}"


def _decode_default(f: NestedField, kind: str, raw: Any) -> Any:
    from frazil import values

    if raw is None:
        return None
    try:
        return values.from_json(type_to_json(f.field_type), raw)
    except UnknownTypeError:
        raise UnknownTypeError(
            f"field {f.field_id} ({f.name}): cannot decode its {kind}: frazil.values does not "
            f"support type {f.field_type}"
        ) from None
    except FrazilError as error:
        raise InvalidMetadataError(
            f"field {f.field_id} ({f.name}): invalid {kind} {js._show(raw)} for type "
            f"{f.field_type}: {error}"
        ) from None


def check_default(f: NestedField, kind: str, raw: Any) -> None:
    """Raise InvalidMetadataError if ``raw`` is not a valid JSON single value of the field's
    type (the v3 nanosecond timestamps included). Types that have no single values in
    :mod:`frazil.values` (``variant``, ``geometry``, ``geography``) are left unchecked: their
    defaults are kept as read."""
    try:
        _decode_default(f, kind, raw)
    except UnknownTypeError:
        return


def default_json(field_type: IcebergType, value: Any) -> Any:
    """The JSON single-value form (Appendix D) of a Python default value, for
    ``NestedField(initial_default=..., write_default=...)``."""
    from frazil import values

    return values.to_json(type_to_json(field_type), value)


def optional(
    field_id: int, name: str, field_type: IcebergType, doc: str | None = None, **defaults: Any
) -> NestedField:
    """An optional field (``initial_default=``/``write_default=`` may be given)."""
    return NestedField(field_id, name, field_type, False, doc, **defaults)


def required(
    field_id: int, name: str, field_type: IcebergType, doc: str | None = None, **defaults: Any
) -> NestedField:
    """A required field (``initial_default=``/``write_default=`` may be given)."""
    return NestedField(field_id, name, field_type, True, doc, **defaults)


@dataclass(frozen=True)
@checked
class StructType(IcebergType):
    fields: tuple[NestedField, ...] = ()

    @property
    def is_nested(self) -> bool:
        return True

    def child_fields(self) -> tuple[NestedField, ...]:
        return self.fields

    def field(self, field_id: int) -> NestedField | None:
        """The direct child with this id, or None."""
        return next((f for f in self.fields if f.field_id == field_id), None)

    def field_by_name(self, name: str, case_sensitive: bool = True) -> NestedField | None:
        """The direct child with this name, or None."""
        if case_sensitive:
            return next((f for f in self.fields if f.name == name), None)
        lower = name.lower()
        return next((f for f in self.fields if f.name.lower() == lower), None)

    def __str__(self) -> str:
        return "struct<" + ", ".join(str(f) for f in self.fields) + ">"


@dataclass(frozen=True)
@checked
class ListType(IcebergType):
    element_id: int
    element_type: IcebergType
    element_required: bool = False

    @property
    def is_nested(self) -> bool:
        return True

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    def child_fields(self) -> tuple[NestedField, ...]:
        return (self.element_field,)

    def __str__(self) -> str:
        return f"list<{self.element_type}>"


@dataclass(frozen=True)
@checked
class MapType(IcebergType):
    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = False

    @property
    def is_nested(self) -> bool:
        return True

    @property
    def key_field(self) -> NestedField:
        # Map keys are always required (spec: Nested Types).
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    def child_fields(self) -> tuple[NestedField, ...]:
        return (self.key_field, self.value_field)

    def __str__(self) -> str:
        return f"map<{self.key_type}, {self.value_type}>"


# --- JSON (Appendix C, "Schemas") -------------------------------------------------------------


def field_to_json(f: NestedField) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": f.field_id,
        "name": f.name,
        "required": f.required,
        "type": type_to_json(f.field_type),
    }
    if f.doc is not None:
        out["doc"] = f.doc
    if f.initial_default is not None:
        out["initial-default"] = f.initial_default
    if f.write_default is not None:
        out["write-default"] = f.write_default
    return out


def type_to_json(t: IcebergType) -> Any:
    """The Appendix C JSON of a type: a string for primitives, an object for nested types."""
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {
            "type": "list",
            "element-id": t.element_id,
            "element": type_to_json(t.element_type),
            "element-required": t.element_required,
        }
    if isinstance(t, MapType):
        return {
            "type": "map",
            "key-id": t.key_id,
            "key": type_to_json(t.key_type),
            "value-id": t.value_id,
            "value": type_to_json(t.value_type),
            "value-required": t.value_required,
        }
    if isinstance(t, (PrimitiveType, VariantType)):
        return str(t)
    raise InvalidMetadataError(f"cannot serialize unknown type {t!r}")


def too_deeply_nested(fields: tuple[NestedField, ...]) -> str | None:
    """The dotted name (``a.element.b``) of the first field, list element or map key or value
    among ``fields`` (a schema's top-level fields) whose type nests more than
    :data:`MAX_NESTING_DEPTH` levels deep, as the Rust core finds it; None when there is none.
    Walks without recursion: it guards the code that recurses once per level."""
    pending = [(f.field_type, f.name, 1) for f in reversed(fields)]
    while pending:
        field_type, path, depth = pending.pop()
        if not isinstance(field_type, StructType | ListType | MapType):
            continue
        if depth > MAX_NESTING_DEPTH:
            return path
        if isinstance(field_type, StructType):
            children = [(f.field_type, f"{path}.{f.name}", depth + 1) for f in field_type.fields]
            pending.extend(reversed(children))
        elif isinstance(field_type, ListType):
            pending.append((field_type.element_type, f"{path}.element", depth + 1))
        else:
            pending.append((field_type.value_type, f"{path}.value", depth + 1))
            pending.append((field_type.key_type, f"{path}.key", depth + 1))
    return None


def nesting_error(where: str) -> InvalidSchemaError:
    """The refusal of a type nested deeper than :data:`MAX_NESTING_DEPTH` (``where`` names it)."""
    return InvalidSchemaError(
        f"{where} is nested more than {MAX_NESTING_DEPTH} levels deep (struct, list and map "
        f"types one inside another); frazil supports at most {MAX_NESTING_DEPTH}: "
        f"{_native.NESTING_DEPTH_REASON}"
    )


def field_from_json(node: Any, what: str = "struct field", _level: int = 0) -> NestedField:
    obj = js.as_object(node, what)
    field_id = js.get_int(obj, "id", what)
    where = f"field {field_id}"
    name = js.get_str(obj, "name", where)
    if "type" not in obj:
        raise InvalidMetadataError(f"{where} ({name}) is missing required field 'type'")
    field_type = type_from_json(obj["type"], f"{where} ({name})", _level + 1)
    return NestedField(
        field_id=field_id,
        name=name,
        field_type=field_type,
        required=js.get_bool(obj, "required", where),
        doc=js.opt_str(obj, "doc", where),
        initial_default=obj.get("initial-default"),
        write_default=obj.get("write-default"),
    )


def type_from_json(node: Any, what: str = "type", _level: int = 0) -> IcebergType:
    """Parse the Appendix C JSON of a type (a type string or a struct/list/map object).

    ``_level`` is how deep the type nests (0 for a schema's own struct, 1 for a top-level
    field's type): a type deeper than :data:`MAX_NESTING_DEPTH` is refused as soon as it is
    met, before the parser recurses further (a metadata file may nest thousands deep)."""
    if isinstance(node, str):
        return parse_type(node)
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("struct", "list", "map") and _level > MAX_NESTING_DEPTH:
            raise nesting_error(what)
        if kind == "struct":
            fields = js.get_list(node, "fields", f"{what} struct")
            return StructType(tuple(field_from_json(f, _level=_level) for f in fields))
        if kind == "list":
            where = f"{what} list"
            element = _required_key(node, "element", where)
            return ListType(
                element_id=js.get_int(node, "element-id", where),
                element_type=type_from_json(element, f"{where} element", _level + 1),
                element_required=js.get_bool(node, "element-required", where),
            )
        if kind == "map":
            where = f"{what} map"
            key = _required_key(node, "key", where)
            value = _required_key(node, "value", where)
            return MapType(
                key_id=js.get_int(node, "key-id", where),
                key_type=type_from_json(key, f"{where} key", _level + 1),
                value_id=js.get_int(node, "value-id", where),
                value_type=type_from_json(value, f"{where} value", _level + 1),
                value_required=js.get_bool(node, "value-required", where),
            )
    raise UnknownTypeError(f"cannot parse {what} from JSON: {js._show(node)}")


def _required_key(node: js.JsonObject, key: str, what: str) -> Any:
    if key not in node:
        raise InvalidMetadataError(f"{what} is missing required field {key!r}")
    return node[key]
