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
from frazil.spark._pyspark import require

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


def _partition_columns(table: Table) -> list[Any]:
    from frazil.spark.functions import transform

    functions = require("pyspark.sql.functions")
    schema = table.schema()
    columns = []
    for field in table.spec().fields:
        if field.transform == "void":
            continue
        name = schema.find_column_name(field.source_id)
        columns.append(transform(field.transform, functions.col(_quoted(name))))
    return columns


def _sort_columns(table: Table) -> list[Any]:
    from frazil.sorting import NullOrder, SortDirection
    from frazil.spark.functions import transform

    functions = require("pyspark.sql.functions")
    schema = table.schema()
    columns = []
    for field in table.sort_order().fields:
        name = schema.find_column_name(field.source_id)
        column = transform(str(field.transform), functions.col(_quoted(name)))
        ascending = field.direction == SortDirection.ASC
        nulls_first = field.null_order == NullOrder.NULLS_FIRST
        if ascending:
            column = column.asc_nulls_first() if nulls_first else column.asc_nulls_last()
        else:
            column = column.desc_nulls_first() if nulls_first else column.desc_nulls_last()
        columns.append(column)
    return columns


def _quoted(name: str | None) -> str:
    assert name is not None
    # A dotted name is a nested field's path; each part is quoted for names with odd letters.
    return ".".join(f"`{part.replace('`', '``')}`" for part in name.split("."))


def distribute(df: Any, table: Table, properties: Mapping[str, str]) -> Any:
    """``df`` repartitioned per the table's distribution mode."""
    mode = distribution_mode(table, properties)
    if mode == "none":
        return df
    partition = _partition_columns(table)
    if mode == "hash":
        return df.repartition(*partition) if partition else df
    ordering = [c.asc_nulls_first() for c in partition] + _sort_columns(table)
    return df.repartitionByRange(*ordering) if ordering else df
