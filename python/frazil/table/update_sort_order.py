"""Sort order replacement (spec: "Sorting"; Java: ``BaseReplaceSortOrder``).

The builder states the whole new order, field by field::

    with UpdateSortOrder(metadata) as update:
        update.asc("id", transform="bucket[4]")
        update.desc("ts", transform="day", null_order=NullOrder.NULLS_FIRST)

``asc`` defaults to nulls first and ``desc`` to nulls last, as in Java. A builder with no fields
makes the table unsorted. An order equal to an existing one reuses its id.
"""

from __future__ import annotations

from frazil.errors import InvalidUpdateError
from frazil.metadata import TableMetadata
from frazil.partitioning import canonical_transform, check_transform_source, is_known_transform
from frazil.sorting import NullOrder, SortDirection, SortField, SortOrder
from frazil.table._builder import Committer, EvolutionBuilder
from frazil.table.updates import LAST_ADDED, AddSortOrder, SetDefaultSortOrder, TableUpdate
from frazil.types import PrimitiveType

__all__ = ["UpdateSortOrder"]


class UpdateSortOrder(EvolutionBuilder[SortOrder]):
    """Replace the default sort order of a table."""

    def __init__(
        self,
        metadata: TableMetadata,
        *,
        case_sensitive: bool = True,
        committer: Committer | None = None,
    ) -> None:
        super().__init__(metadata, committer)
        self._schema = metadata.schema()
        self._case_sensitive = case_sensitive
        self._fields: list[SortField] = []

    def _add(
        self,
        source: str,
        transform: str,
        direction: SortDirection,
        null_order: NullOrder | str,
    ) -> UpdateSortOrder:
        column = self._schema.find_field(source, self._case_sensitive)
        if column is None:
            raise InvalidUpdateError(
                f"cannot sort by {source!r}: no such column in schema {self._schema.schema_id}"
            )
        if not isinstance(column.field_type, PrimitiveType):
            raise InvalidUpdateError(
                f"cannot sort by {source!r}: it is a {column.field_type}, not a primitive"
            )
        text = canonical_transform(str(transform))
        if not is_known_transform(text):
            raise InvalidUpdateError(f"cannot sort by the unknown transform {transform!r}")
        check_transform_source(text, column.field_type, f"sort field on {source!r}")
        field = SortField(column.field_id, text, direction, null_order)  # type: ignore[arg-type]
        self._fields.append(field)
        return self

    def asc(
        self,
        source: str,
        transform: str = "identity",
        null_order: NullOrder | str = NullOrder.NULLS_FIRST,
    ) -> UpdateSortOrder:
        return self._add(source, transform, SortDirection.ASC, null_order)

    def desc(
        self,
        source: str,
        transform: str = "identity",
        null_order: NullOrder | str = NullOrder.NULLS_LAST,
    ) -> UpdateSortOrder:
        return self._add(source, transform, SortDirection.DESC, null_order)

    def apply(self) -> SortOrder:
        """The new order (its order id is assigned when it is committed)."""
        if not self._fields:
            return SortOrder.unsorted()
        next_id = max([1, *(o.order_id + 1 for o in self._base.sort_orders)])
        return SortOrder(next_id, tuple(self._fields))

    def updates(self) -> tuple[TableUpdate, ...]:
        new = self.apply()
        current = self._base.sort_order()
        if new.fields == current.fields:
            return ()
        for order in self._base.sort_orders:
            if order.fields == new.fields:
                return (SetDefaultSortOrder(order.order_id),)
        return (AddSortOrder(new), SetDefaultSortOrder(LAST_ADDED))
