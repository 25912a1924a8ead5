"""Sort orders (spec: "Sorting", Appendix C "Sort Orders").

Transforms follow the rules of :mod:`frazil.partitioning`: known transforms are
validated and canonicalised, unknown ones are kept as read.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from frazil import _jsonutil as js
from frazil._checked import checked
from frazil.errors import InvalidMetadataError, UnsupportedTransformError
from frazil.partitioning import (
    _UNSET,
    _model,
    canonical_transform,
    check_transform_source,
    id_and_fields,
    is_known_transform,
)
from frazil.transforms import Transform
from frazil.types import PrimitiveType

if TYPE_CHECKING:
    from frazil.schema import Schema

__all__ = ["UNSORTED_ORDER_ID", "NullOrder", "SortDirection", "SortField", "SortOrder"]

# Spec: "Sorting": order id 0 is reserved for the unsorted order.
UNSORTED_ORDER_ID = 0
# Java's and pyiceberg's id of a table's first sort order.
INITIAL_ORDER_ID = 1


class SortDirection(str, enum.Enum):
    ASC = "asc"
    DESC = "desc"

    def __str__(self) -> str:
        return self.value


class NullOrder(str, enum.Enum):
    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"

    def __str__(self) -> str:
        return self.value


def _enum(cls: type[enum.Enum], value: Any, what: str) -> Any:
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        for member in cls:
            # Java reads both case-insensitively.
            if member.value == value.lower():
                return member
    allowed = ", ".join(repr(m.value) for m in cls)
    raise InvalidMetadataError(f"{what}: invalid value {value!r}, expected one of {allowed}")


@dataclass(frozen=True)
@checked(also={"transform": (Transform,), "null_order": (type(None), str)})
class SortField:
    """A sort field: source column id, transform, direction and null order. Without a null
    order, nulls sort first when ascending and last when descending (Java's ``SortOrder``
    builder and pyiceberg's ``SortField``)."""

    source_id: int
    transform: str = "identity"
    direction: SortDirection = SortDirection.ASC
    # None (the default) becomes the direction's null order in __post_init__.
    null_order: NullOrder = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        transform = self.transform
        if isinstance(transform, Transform):
            transform = str(transform)
        object.__setattr__(self, "transform", canonical_transform(transform))
        direction = _enum(SortDirection, self.direction, "direction")
        object.__setattr__(self, "direction", direction)
        null_order = self.null_order
        if null_order is None:
            ascending = direction is SortDirection.ASC
            null_order = NullOrder.NULLS_FIRST if ascending else NullOrder.NULLS_LAST
        object.__setattr__(self, "null_order", _enum(NullOrder, null_order, "null-order"))

    @property
    def transform_model(self) -> Transform:
        return _model(self.transform)

    def to_json(self) -> dict[str, Any]:
        return {
            "transform": self.transform,
            "source-id": self.source_id,
            "direction": self.direction.value,
            "null-order": self.null_order.value,
        }

    @classmethod
    def from_json(cls, node: Any, what: str = "sort field") -> SortField:
        obj = js.as_object(node, what)
        return cls(
            source_id=js.get_int(obj, "source-id", what),
            transform=js.get_str(obj, "transform", what),
            direction=_enum(SortDirection, js.get_str(obj, "direction", what), what),
            null_order=_enum(NullOrder, js.get_str(obj, "null-order", what), what),
        )

    def __str__(self) -> str:
        return f"{self.transform}({self.source_id}) {self.direction} {self.null_order}"


@dataclass(frozen=True)
@checked
class SortOrder:
    """A sort order: ``order_id`` and its fields. Id 0 is the unsorted order, with no fields.

    Built as pyiceberg builds one, ``SortOrder(field, ..., order_id=1)``, or with the id first,
    ``SortOrder(1, (field, ...))``. Without an id, an order with fields gets 1 (pyiceberg's
    and Java's first order id) and one without fields 0."""

    order_id: int = UNSORTED_ORDER_ID
    fields: tuple[SortField, ...] = ()

    @overload
    def __init__(self, *fields: SortField, order_id: int = ...) -> None: ...
    @overload
    def __init__(self, order_id: int = ..., fields: Iterable[SortField] = ()) -> None: ...

    def __init__(self, *args: Any, order_id: Any = _UNSET, fields: Any = _UNSET) -> None:
        order_id, fields = id_and_fields(
            "sort order", SortField, args, "order_id", order_id, fields
        )
        fields = () if fields is _UNSET else fields
        if order_id is _UNSET:
            order_id = INITIAL_ORDER_ID if fields else UNSORTED_ORDER_ID
        object.__setattr__(self, "order_id", order_id)
        object.__setattr__(self, "fields", fields)
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.fields and self.order_id == UNSORTED_ORDER_ID:
            raise InvalidMetadataError(
                "sort order id 0 is reserved for the unsorted order, which has no fields"
            )
        if not self.fields and self.order_id != UNSORTED_ORDER_ID:
            raise InvalidMetadataError(
                f"sort order {self.order_id} has no fields: the unsorted order must have id 0"
            )

    @classmethod
    def unsorted(cls) -> SortOrder:
        return cls(UNSORTED_ORDER_ID, ())

    def is_unsorted(self) -> bool:
        return not self.fields

    def check_compatible(self, schema: Schema) -> None:
        """Check each field against ``schema``: the source exists, is a primitive, and the
        transform applies to it (Java: SortOrder.checkCompatibility)."""
        for f in self.fields:
            what = f"sort order {self.order_id} field {f}"
            source = schema.find_field(f.source_id)
            if source is None:
                raise InvalidMetadataError(
                    f"{what}: cannot find source column {f.source_id} in schema {schema.schema_id}"
                )
            if not isinstance(source.field_type, PrimitiveType):
                raise UnsupportedTransformError(
                    f"{what}: cannot sort by non-primitive column "
                    f"{schema.find_column_name(f.source_id)!r} ({source.field_type})"
                )
            check_transform_source(f.transform, source.field_type, what)

    def satisfies(self, other: SortOrder) -> bool:
        """Whether data sorted by this order is also sorted by ``other`` (Java:
        SortOrder.satisfies): ``other`` is a prefix of this order, field by field."""
        if other.is_unsorted():
            return True
        if len(other.fields) > len(self.fields):
            return False
        for mine, theirs in zip(self.fields, other.fields, strict=False):
            if (mine.source_id, mine.direction, mine.null_order) != (
                theirs.source_id,
                theirs.direction,
                theirs.null_order,
            ):
                return False
            if mine.transform == theirs.transform:
                continue
            if not (is_known_transform(mine.transform) and is_known_transform(theirs.transform)):
                return False
            if not mine.transform_model.satisfies_order_of(theirs.transform_model):
                return False
        return True

    def to_json(self) -> dict[str, Any]:
        return {"order-id": self.order_id, "fields": [f.to_json() for f in self.fields]}

    @classmethod
    def from_json(cls, node: Any) -> SortOrder:
        obj = js.as_object(node, "sort order")
        order_id = js.get_int(obj, "order-id", "sort order")
        what = f"sort order {order_id}"
        items = js.get_list(obj, "fields", what)
        return cls(order_id, tuple(SortField.from_json(item, f"{what} field") for item in items))

    def __str__(self) -> str:
        return "[" + ", ".join(str(f) for f in self.fields) + "]"
