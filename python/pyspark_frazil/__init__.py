"""The module Spark 4.x discovers on its first Python Data Source lookup (every installed
top-level module named ``pyspark_*`` with a ``DefaultSource``): makes
``spark.read.format("frazil")`` work without registering anything. A re-export only."""

from frazil.spark.datasource import FrazilDataSource as DefaultSource

__all__ = ["DefaultSource"]
