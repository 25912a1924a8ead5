"""Partition transforms over Arrow data (spec: "Partition Transforms").

Each function takes a pyarrow ``Array`` or ``ChunkedArray``, or any object that
implements the Arrow PyCapsule interface (``__arrow_c_array__`` or
``__arrow_c_stream__``), and returns the pyarrow counterpart: an ``Array`` for
an array, a ``ChunkedArray`` for a chunked array or stream. Data crosses into
Rust without a copy and the GIL is released while the kernel runs. Nulls map to
nulls.

``threads`` splits large arrays over that many worker threads; ``0`` means one
per core. The default, 1, runs on the calling thread.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from frazil._native import Transform, apply_transform
from frazil.errors import FrazilTypeError, InvalidTransformError

__all__ = [
    "Transform",
    "apply",
    "bucket",
    "day",
    "hour",
    "identity",
    "month",
    "truncate",
    "void",
    "year",
]

ArrowLike = Any
"""A pyarrow Array or ChunkedArray, or an object with ``__arrow_c_array__`` /
``__arrow_c_stream__``."""


def _check_threads(threads: int) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise InvalidTransformError(f"threads must be a non-negative integer, got {threads!r}")
    return threads


def apply(transform: str | Transform, values: ArrowLike, *, threads: int = 1) -> Any:
    """Apply a transform given by its Appendix C string (``"bucket[16]"``, ``"day"``, ...)."""
    if isinstance(transform, str):
        transform = Transform(transform)
    elif not isinstance(transform, Transform):
        raise FrazilTypeError(
            f"transform must be a string such as 'bucket[16]' or a Transform, "
            f"got {type(transform).__name__}"
        )
    if isinstance(values, pa.ChunkedArray):
        # A ChunkedArray is exported as a stream; keep the ChunkedArray result.
        pass
    elif not (hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__")):
        raise FrazilTypeError(
            "values must be a pyarrow Array or ChunkedArray, or implement the Arrow "
            f"PyCapsule interface; got {type(values).__name__}"
        )
    return apply_transform(transform, values, _check_threads(threads))


def _parameter(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FrazilTypeError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise InvalidTransformError(f"{name} must be positive, got {value}")
    return value


def bucket(values: ArrowLike, num_buckets: int, *, threads: int = 1) -> Any:
    """``bucket[N]``: Murmur3 hash of each value (Appendix B), sign bit dropped, mod N.

    Returns int32.
    """
    n = _parameter("num_buckets", num_buckets)
    return apply(f"bucket[{n}]", values, threads=threads)


def truncate(values: ArrowLike, width: int, *, threads: int = 1) -> Any:
    """``truncate[W]``: integers and decimals rounded down to a multiple of W, strings cut to
    W code points, binary to W bytes. Returns the source type (int32 for 8 and 16-bit ints)."""
    w = _parameter("width", width)
    return apply(f"truncate[{w}]", values, threads=threads)


def year(values: ArrowLike, *, threads: int = 1) -> Any:
    """Years from 1970 (floor: a value before 1970 gives a negative year). Returns int32."""
    return apply("year", values, threads=threads)


def month(values: ArrowLike, *, threads: int = 1) -> Any:
    """Months from 1970-01 (floor). Returns int32."""
    return apply("month", values, threads=threads)


def day(values: ArrowLike, *, threads: int = 1) -> Any:
    """Days from 1970-01-01 (floor). Returns int32."""
    return apply("day", values, threads=threads)


def hour(values: ArrowLike, *, threads: int = 1) -> Any:
    """Hours from 1970-01-01 00:00 (floor), timestamps only. Returns int32."""
    return apply("hour", values, threads=threads)


def identity(values: ArrowLike, *, threads: int = 1) -> Any:
    """The values unchanged."""
    return apply("identity", values, threads=threads)


def void(values: ArrowLike, *, threads: int = 1) -> Any:
    """All nulls, of the source type."""
    return apply("void", values, threads=threads)
