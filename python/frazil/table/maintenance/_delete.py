"""Deleting many files at once on a thread pool (FileIO releases the GIL while it works; Java
deletes on an executor too, FileCleanupStrategy.deleteFiles).

A failed delete is retried up to three times, then reported: the files left behind are orphans
that a later orphan removal cleans, which is what Java does (it logs and goes on). Deleting a
file that is already gone succeeds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["DEFAULT_DELETE_THREADS", "delete_all"]

DEFAULT_DELETE_THREADS = 16
_ATTEMPTS = 3
_LOG = logging.getLogger("frazil.maintenance")


def _delete_one(delete: Callable[[str], None], location: str) -> Exception | None:
    error: Exception | None = None
    for _ in range(_ATTEMPTS):
        try:
            delete(location)
            return None
        except FileNotFoundError:
            return None
        except Exception as caught:
            error = caught
    return error


def delete_all(
    locations: Iterable[str],
    delete: Callable[[str], None],
    threads: int = DEFAULT_DELETE_THREADS,
) -> dict[str, Exception]:
    """Delete every location with ``delete``; returns the ones that failed, with why."""
    todo = list(locations)
    if not todo:
        return {}
    workers = max(1, min(threads, len(todo)))
    # Each worker takes a slice: one future per file costs more than a local delete.
    slices = [todo[i::workers] for i in range(workers)]

    def run(part: list[str]) -> list[tuple[str, Exception]]:
        outcomes = ((loc, _delete_one(delete, loc)) for loc in part)
        return [(loc, error) for loc, error in outcomes if error is not None]

    failures: dict[str, Exception] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for failed in pool.map(run, slices):
            for location, error in failed:
                _LOG.warning("could not delete %s: %s", location, error)
                failures[location] = error
    return dict(sorted(failures.items()))
