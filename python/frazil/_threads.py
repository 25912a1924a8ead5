"""How many threads frazil's pools use in this process: one owner for the Python pools and the
Rust core's rayon pool.

By default every core of the machine. ``FRAZIL_THREADS`` (an integer >= 1) overrides it, and
:func:`set_threads` does at run time: a Spark task sets it from ``spark.task.cpus`` so that N
tasks on one executor do not each start a pool as large as the host (frazil.spark)."""

from __future__ import annotations

import os

from frazil.errors import ValidationError

ENVIRONMENT_VARIABLE = "FRAZIL_THREADS"

_override: int | None = None


def _from_environment() -> int | None:
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    if value is None or value.strip() == "":
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValidationError(
            f"environment variable {ENVIRONMENT_VARIABLE} must be an integer >= 1, got {value!r}"
        )
    return count


def threads() -> int:
    """The thread count for a pool that would use "all cores"."""
    if _override is not None:
        return _override
    return _from_environment() or max(1, os.cpu_count() or 1)


def set_threads(count: int | None) -> None:
    """Use ``count`` threads (None: back to ``FRAZIL_THREADS`` or the core count), in Python's
    pools and in the Rust core's."""
    global _override
    from frazil import _native

    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValidationError(f"thread count must be an integer >= 1, got {count!r}")
    _override = count
    _native.set_thread_limit(0 if count is None else count)
    # pyarrow's compute and decode pool too (its default is the host's cores).
    import pyarrow as pa

    pa.set_cpu_count(threads())
