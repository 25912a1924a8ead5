"""frazil: a Rust-accelerated Python implementation of the Apache Iceberg table format."""

from __future__ import annotations

from frazil import errors, transforms, values
from frazil._native import __version__
from frazil.errors import FrazilError

__all__ = ["FrazilError", "__version__", "errors", "transforms", "values"]
