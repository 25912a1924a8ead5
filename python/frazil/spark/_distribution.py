"""How a write's rows reach its tasks: ``write.distribution-mode`` as Iceberg Java's Spark
integration reads it (``SparkWriteConf.distributionMode``): the write option, else the table
property, else ``range`` for a table with a sort order, ``hash`` for a partitioned one and
``none`` otherwise.

- ``none``: rows stay in the DataFrame's partitions.
- ``hash``: rows are shuffled by the partition values (the spec's transforms of their source
  columns, computed by :mod:`frazil.spark.functions`), so each partition's rows meet in one
  task and make few files.
- ``range``: rows are range-partitioned by the sort order (the partition values first, as
  Java's required ordering puts them), so files do not overlap.

Within a task frazil's writer keeps a file open per partition it meets and sorts each file's
rows by the sort order itself: unclustered input never fails, which is what
``write.spark.fanout.enabled=true`` means to Java; with it off Java refuses rows that are not
clustered by partition, a refusal frazil has no need for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from frazil.errors import ValidationError

if TYPE_CHECKING:
    from frazil.table import Table

PROPERTY = "write.distribution-mode"
MODES = ("none", "hash", "range")


def distribution_mode(table: Table, properties: Mapping[str, str]) -> str:
    value = properties.get(PROPERTY)
    if value is None:
        if table.sort_order().fields:
            return "range"
        if not table.spec().is_unpartitioned():
            return "hash"
        return "none"
    mode = value.strip().lower()
    if mode not in MODES:
        raise ValidationError(f"{PROPERTY} must be one of {', '.join(MODES)}, got {value!r}")
    return mode


def _column(df: Any, table: Table, source_id: int) -> Any:
    from frazil.spark.functions import _column_path

    path = _column_path(table.schema(), source_id)
    column = df[path[0]]
    for name in path[1:]:
        column = column.getField(name)
    return column


def _partition_columns(df: Any, table: Table) -> list[Any]:
    from frazil.spark.functions import transform

    return [
        transform(field.transform, _column(df, table, field.source_id), df=df)
        for field in table.spec().fields
        if field.transform != "void"
    ]


def _sort_columns(df: Any, table: Table) -> list[Any]:
    from frazil.sorting import NullOrder, SortDirection
    from frazil.spark.functions import transform

    columns = []
    for field in table.sort_order().fields:
        column = transform(str(field.transform), _column(df, table, field.source_id), df=df)
        ascending = field.direction == SortDirection.ASC
        nulls_first = field.null_order == NullOrder.NULLS_FIRST
        if ascending:
            column = column.asc_nulls_first() if nulls_first else column.asc_nulls_last()
        else:
            column = column.desc_nulls_first() if nulls_first else column.desc_nulls_last()
        columns.append(column)
    return columns


def distribute(df: Any, table: Table, properties: Mapping[str, str]) -> Any:
    """``df`` repartitioned per the table's distribution mode."""
    mode = distribution_mode(table, properties)
    if mode == "none":
        return df
    partition = _partition_columns(df, table)
    if mode == "hash":
        return df.repartition(*partition) if partition else df
    ordering = [c.asc_nulls_first() for c in partition] + _sort_columns(df, table)
    return df.repartitionByRange(*ordering) if ordering else df
