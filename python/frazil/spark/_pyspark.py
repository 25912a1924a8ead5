"""pyspark, imported when a Spark function is called (never at ``import frazil``)."""

from __future__ import annotations

import importlib
from typing import Any

from frazil.errors import MissingDependencyError

SPARK_EXTRA = 'pip install "frazil[spark]"'


def require(module: str = "pyspark") -> Any:
    """``module`` (pyspark or one of its submodules), or a MissingDependencyError naming the
    ``spark`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(
            f"frazil.spark needs pyspark (3.5 or 4.x), which is not installed ({error}): "
            f"{SPARK_EXTRA}"
        ) from None


def spark_version() -> tuple[int, int]:
    """(major, minor) of the installed pyspark."""
    version = require().__version__
    major, minor = version.split(".")[:2]
    return int(major), int(minor)
