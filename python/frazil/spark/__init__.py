"""frazil on Apache Spark through PySpark, without Iceberg's JVM runtime jar (issue 23).

Glue only: the driver plans with frazil's planner and commits once through frazil's
transactions; executors run :func:`frazil.table.read.read_task`, frazil's writer and the
manifest decoder on plain data (Appendix C task JSON, data file records, table metadata JSON,
FileIO properties) or Arrow. Executors never talk to a catalog.

Importing this package needs no pyspark: ``import frazil`` never imports it, and the functions
import it when called, raising :class:`~frazil.errors.MissingDependencyError` naming the
``spark`` extra when it is missing.

- :func:`read` / :func:`write`: a table as a Spark DataFrame, a DataFrame into a table.
- :mod:`frazil.spark.functions`: Iceberg's partition transforms as Spark Columns.
- :func:`register`: the Python Data Source ``frazil`` (Spark 4.x).
- :func:`merge`: ``MERGE`` of a DataFrame into a table (the local merge's clauses), the join
  done by Spark and the clauses applied and files written by executors.
- :func:`remove_orphan_files`, :func:`expire_snapshots`, :func:`rewrite_data_files`:
  maintenance with executors.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "add_partition_columns",
    "expire_snapshots",
    "merge",
    "read",
    "register",
    "remove_orphan_files",
    "rewrite_data_files",
    "write",
]

# Public name -> the submodule defining it, imported on first use (so that importing
# frazil.spark needs no pyspark). reader/writer/merging, not read/write/merge: a submodule named
# like a function would replace it as an attribute of this package once imported.
_LAZY = {
    "read": "frazil.spark.reader",
    "write": "frazil.spark.writer",
    "add_partition_columns": "frazil.spark.functions",
    "register": "frazil.spark.datasource",
    "remove_orphan_files": "frazil.spark.maintenance",
    "expire_snapshots": "frazil.spark.maintenance",
    "rewrite_data_files": "frazil.spark.rewrite",
    "merge": "frazil.spark.merging",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'frazil.spark' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
