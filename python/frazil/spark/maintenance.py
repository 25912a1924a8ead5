"""Table maintenance with Spark executors: removing orphan files and expiring snapshots
(Java's ``DeleteOrphanFilesSparkAction`` and ``ExpireSnapshotsSparkAction``).

Glue around :mod:`frazil.table.maintenance`, whose rules decide everything: what the table
references (:func:`~frazil.table.maintenance.orphans.reachable_metadata`,
:func:`~frazil.table.maintenance._reachable.live_content_files`), which listed files are
candidates (hidden files, frazil's temporary files, the age threshold:
:class:`~frazil.table.maintenance.orphans.ListingRules`), how locations compare
(:func:`~frazil.table.maintenance._locations.location_keys`), what a candidate whose path is
live under another store becomes (:func:`~frazil.table.maintenance.orphans.verdict`), and the
metadata side of an expiry (:class:`~frazil.table.maintenance.expire.ExpireSnapshots`, one
commit on the driver; an unknown outcome raises before anything is deleted).

What moves to executors is the work that grows with the table: listing the location (the driver
lists the top levels, as Java does to a depth of 3 while a directory has at most 10
subdirectories, and each remaining directory is listed recursively by one task), decoding the
manifests of every snapshot into the data and delete files they hold live, comparing the two
sides (a join on normalized location keys, never Python sets on the driver) and deleting.
Tasks get plain data only: locations, manifest-list rows, the table's FileIO properties.
Only what is returned (the orphans, the deleted files) is collected on the driver.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from frazil.errors import ValidationError
from frazil.io import FileInfo, FileIO
from frazil.spark._pyspark import require
from frazil.table.maintenance._delete import DEFAULT_DELETE_THREADS, delete_all
from frazil.table.maintenance._locations import location_keys, path_keys
from frazil.table.maintenance._reachable import FileKind, live_content_files
from frazil.table.maintenance.expire import (
    ExpireSnapshots,
    ExpireSnapshotsResult,
    expiry_candidates,
)
from frazil.table.maintenance.orphans import (
    ListingRules,
    PrefixMismatchMode,
    check_prefix_mismatch_mode,
    orphan_cutoff_ms,
    reachable_metadata,
    refuse_conflicts,
    verdict,
    warn_unknown_age,
)

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata
    from frazil.table._table import Table

__all__ = ["expire_snapshots", "remove_orphan_files"]

# Java's DeleteOrphanFilesSparkAction: the driver lists to this depth while a directory has at
# most this many subdirectories; deeper (or wider) directories are listed by tasks.
MAX_DRIVER_LISTING_DEPTH = 3
MAX_DRIVER_DIRECT_SUBDIRS = 10


def _task_io(properties: Mapping[str, str]) -> FileIO:
    """The FileIO of a task, with frazil's pools sized for the task (:func:`task_threads`)."""
    from frazil.spark._tasks import task_threads

    task_threads()
    return FileIO(properties)


# --- executor tasks (module-level functions: they pickle by reference) ---------------------


def _list_task(
    properties: Mapping[str, str], rules: ListingRules, unknown: Any, prefixes: Iterable[str]
) -> Iterator[str]:
    """Lists each directory recursively; yields the candidates (see ListingRules) and adds
    the files kept for want of a modification time to the accumulator ``unknown``."""
    io = _task_io(properties)
    for prefix in prefixes:
        found, unknown_age = rules.candidates(io.list(prefix))
        if unknown_age:
            unknown.add(unknown_age)
        yield from found


def _content_task(
    properties: Mapping[str, str], rows: Iterable[dict[str, Any]]
) -> Iterator[tuple[str, str]]:
    """The data and delete files the manifests (manifest-list rows) hold live, with kinds."""
    todo = list(rows)
    if not todo:
        return iter(())
    found = live_content_files(todo, _task_io(properties))
    return iter([(path, kind.value) for path, kind in found.items()])


# What a key row compares: the whole normalized location, or its path alone (under any store).
_LOCATION = "location"
_PATH = "path"


def _keys(location: str) -> list[tuple[str, str]]:
    """``(kind, key)`` for each normalized form of ``location`` (see _locations)."""
    keys = [(_LOCATION, "\x00".join(key)) for key in location_keys(location)]
    return keys + [(_PATH, form) for form in path_keys(location)]


def _with_keys(item: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``item`` (a location first) once per normalized key of its location."""
    return [(*item, kind, key) for kind, key in _keys(item[0])]


def _alone(location: str) -> tuple[str]:
    return (location,)


def _first(item: tuple[str, ...]) -> tuple[str]:
    return (item[0],)


def _delete_task(
    properties: Mapping[str, str],
    delete_with: Callable[[str], None] | None,
    threads: int,
    locations: Iterable[str],
) -> Iterator[tuple[str, str]]:
    """Deletes the locations; yields ``(location, why)`` for each that failed."""
    todo = list(locations)
    if not todo:
        return iter(())
    delete = delete_with or _task_io(properties).delete
    failed = delete_all(todo, delete, threads)
    return iter([(location, f"{type(e).__name__}: {e}") for location, e in failed.items()])


# --- driver side -----------------------------------------------------------------------------


def _slices(spark: Any, count: int) -> int:
    return max(1, min(count, 4 * int(spark.sparkContext.defaultParallelism)))


def _driver_listing(io: FileIO, root: str) -> tuple[list[FileInfo], list[str]]:
    """The files the driver lists itself and the directories left to tasks (Java's
    ``listDirRecursively`` with maxDepth 3 and maxDirectSubDirs 10)."""
    files: list[FileInfo] = []
    remaining: list[str] = []

    def walk(directory: str, depth: int) -> None:
        if depth <= 0:
            remaining.append(directory)
            return
        listed, subdirectories = io.list_dir(directory)
        files.extend(listed)
        if len(subdirectories) > MAX_DRIVER_DIRECT_SUBDIRS:
            remaining.extend(subdirectories)
            return
        for sub in subdirectories:
            walk(sub, depth - 1)

    walk(root, MAX_DRIVER_LISTING_DEPTH)
    return files, remaining


def _content_rdd(spark: Any, properties: dict[str, str], rows: list[dict[str, Any]]) -> Any:
    """``(path, kind)`` of the content files the manifests hold live, decoded by tasks."""
    if not rows:
        return spark.sparkContext.emptyRDD()
    task = functools.partial(_content_task, properties)
    return spark.sparkContext.parallelize(rows, _slices(spark, len(rows))).mapPartitions(task)


def _key_frame(spark: Any, rdd: Any, payload: list[str]) -> Any:
    """A DataFrame ``(*payload, kind, key)`` from an RDD of tuples whose first item is a
    location: one row per normalized key of the location."""
    types = require("pyspark.sql.types")
    fields = [types.StructField(name, types.StringType(), False) for name in payload]
    fields += [
        types.StructField("kind", types.StringType(), False),
        types.StructField("key", types.StringType(), False),
    ]
    rows = rdd.flatMap(_with_keys)
    return spark.createDataFrame(rows, types.StructType(fields))


def _unreferenced(spark: Any, candidates: Any, payload: list[str], valid: Any) -> Any:
    """The candidates (key frames, see _key_frame) that no valid location matches under any
    normalized form, with ``path_live``: whether their path alone is live under some
    store. A left join and a group by, so that each side is computed once."""
    f = require("pyspark.sql.functions")
    live = valid.select("kind", "key").distinct().withColumn("matched", f.lit(True))
    joined = candidates.join(live, ["kind", "key"], "left")
    matched = f.coalesce(f.col("matched"), f.lit(False))
    grouped = joined.groupBy(*payload).agg(
        f.max(matched & (f.col("kind") == _LOCATION)).alias("referenced"),
        f.max(matched & (f.col("kind") == _PATH)).alias("path_live"),
    )
    return grouped.where(~f.col("referenced"))


def remove_orphan_files(
    spark: Any,
    table: Table,
    older_than: int | dt.datetime | None = None,
    dry_run: bool = False,
    location: str | None = None,
    *,
    prefix_mismatch_mode: PrefixMismatchMode = "error",
    delete_with: Callable[[str], None] | None = None,
    delete_threads: int = DEFAULT_DELETE_THREADS,
) -> list[str]:
    """:func:`frazil.table.maintenance.orphans.remove_orphan_files` with the listing, the
    decoding of manifests, the comparison and the deletion in Spark tasks (same arguments,
    same result: the orphans' locations, sorted, in the form the listing gave). A
    ``delete_with`` callable runs in the executors, so it must pickle."""
    require("pyspark")
    check_prefix_mismatch_mode(prefix_mismatch_mode)
    _check_threads(delete_threads)
    if table.catalog is not None:
        table.refresh()
    cutoff = orphan_cutoff_ms(older_than)
    root = location or table.location()
    rules = ListingRules.of(table.metadata, root, cutoff)
    properties = dict(table.io.properties)
    context = spark.sparkContext

    # The reachable set: the metadata side on the driver, the content files by tasks.
    metadata_files, manifests = reachable_metadata(table)
    valid_rdd = context.parallelize(sorted(metadata_files), 1).map(_alone)
    valid_rdd = valid_rdd.union(
        _content_rdd(spark, properties, list(manifests.values())).map(_first)
    )
    valid = _key_frame(spark, valid_rdd, ["location"])

    # The listing: the top levels on the driver, each remaining directory by a task.
    files, directories = _driver_listing(table.io, root)
    found, unknown = rules.candidates(files)
    unknown_in_tasks = context.accumulator(0)
    listed = context.parallelize(found, 1)
    if directories:
        task = functools.partial(_list_task, properties, rules, unknown_in_tasks)
        listed = listed.union(
            context.parallelize(directories, len(directories)).mapPartitions(task)
        )
    candidates = _key_frame(spark, listed.map(_alone), ["location"])

    rows = _unreferenced(spark, candidates, ["location"], valid).collect()
    warn_unknown_age(unknown + unknown_in_tasks.value)
    orphans: list[str] = []
    conflicts: list[str] = []
    for row in rows:
        outcome = verdict(False, bool(row["path_live"]), prefix_mismatch_mode)
        if outcome == "orphan":
            orphans.append(row["location"])
        elif outcome == "conflict":
            conflicts.append(row["location"])
    refuse_conflicts(sorted(conflicts))
    orphans.sort()
    if not dry_run:
        _delete(spark, properties, delete_with, delete_threads, orphans)
    return orphans


def _check_threads(threads: int) -> None:
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValidationError(f"delete threads must be an int of at least 1, got {threads!r}")


def _delete(
    spark: Any,
    properties: dict[str, str],
    delete_with: Callable[[str], None] | None,
    threads: int,
    locations: list[str],
) -> dict[str, Exception]:
    """Deletes ``locations`` in tasks; the failures (left as orphans, as locally)."""
    if not locations:
        return {}
    task = functools.partial(_delete_task, properties, delete_with, threads)
    rdd = spark.sparkContext.parallelize(locations, _slices(spark, len(locations)))
    failed = rdd.mapPartitions(task).collect()
    return {location: _DeleteFailed(why) for location, why in sorted(failed)}


class _DeleteFailed(Exception):
    """Why a task could not delete a file (the executor's exception, as text)."""


class _SparkExpireSnapshots(ExpireSnapshots):
    """The local expiry (plan, one commit on the driver, result) with the files decided and
    deleted by Spark tasks."""

    def __init__(self, spark: Any, table: Table) -> None:
        super().__init__(table)
        self._spark = spark

    def _expired_files(
        self, before: TableMetadata, after: TableMetadata, table: Table
    ) -> dict[str, FileKind]:
        spark = self._spark
        properties = dict(table.io.properties)
        found = expiry_candidates(before, after, table.io)
        content: dict[str, FileKind] = {}
        if found.expired_manifests:
            expired = _content_rdd(spark, properties, list(found.expired_manifests.values()))
            remaining = _content_rdd(spark, properties, list(found.remaining_manifests.values()))
            candidates = _key_frame(spark, expired, ["location", "file_kind"])
            live = _key_frame(spark, remaining, ["location", "file_kind"])
            rows = _unreferenced(spark, candidates, ["location", "file_kind"], live).collect()
            content = {row["location"]: FileKind(row["file_kind"]) for row in rows}
        return found.files(content)

    def _delete_files(self, files: Iterable[str], table: Table) -> dict[str, Exception]:
        return _delete(
            self._spark, dict(table.io.properties), self._delete, self._threads, list(files)
        )


def expire_snapshots(
    spark: Any,
    table: Table,
    older_than: int | dt.datetime | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] | None = None,
    *,
    dry_run: bool = False,
    clean_expired_files: bool = True,
    delete_with: Callable[[str], None] | None = None,
    delete_threads: int = DEFAULT_DELETE_THREADS,
) -> ExpireSnapshotsResult:
    """:meth:`frazil.table.maintenance.expire.ExpireSnapshots.commit` with the files to delete
    decided (manifests decoded, reachability compared) and deleted in Spark tasks.

    ``older_than``, ``retain_last`` and ``snapshot_ids`` are the builder's ``older_than()``,
    ``retain_last()`` and ``by_ids()`` (none given: the table's ``history.expire.*``
    defaults); ``clean_expired_files``, ``delete_with`` (run in the executors: it must
    pickle) and ``delete_threads`` too. The metadata is committed once, on the driver, before
    anything is deleted; when its outcome is unknown the error propagates and nothing is."""
    require("pyspark")
    expire = _SparkExpireSnapshots(spark, table)
    if older_than is not None:
        expire.older_than(older_than)
    if retain_last is not None:
        expire.retain_last(retain_last)
    if snapshot_ids is not None:
        expire.by_ids(snapshot_ids)
    expire.clean_expired_files(clean_expired_files)
    expire.delete_threads(delete_threads)
    if delete_with is not None:
        expire.delete_with(delete_with)
    return expire.commit(dry_run=dry_run)
