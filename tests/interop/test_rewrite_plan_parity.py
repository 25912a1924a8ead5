"""Compaction planning parity with Apache Iceberg Java 1.10.2: frazil's planners of
rewrite_data_files and rewrite_position_delete_files form the groups Java's
``BinPackRewriteFilePlanner`` and ``BinPackRewritePositionDeletePlanner`` form, called
directly through py4j on the same table.

Spark builds two v2 tables in the Hadoop catalog: ``files`` (partitioned by ``cat``; a large
insert rolled at a small ``write.target-file-size-bytes``, several small inserts, merge-on-read
DELETEs that leave position delete files on some data files) and ``evolved`` (the same kind of
data, then a bucket field added to the spec and more inserts, so that files of two specs
meet). Their manifests are rewritten once at the end, one data and one delete manifest each:
Java plans a table of several manifests in a thread pool, which makes the order of files
within a partition, and so the bin-packing, vary between runs.

Java walks partitions in a hash order that changes from run to run, so groups are compared as
a set (each with its partition, partition index, files in order, sizes and expected output
file count), and the order only where ``rewrite-job-order`` decides it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import frazil
import pytest
from frazil.table.maintenance.rewrite_plan import (
    RewriteDataFilesOptions,
    RewritePlan,
    RewritePositionDeleteFilesOptions,
    plan_rewrite_data_files,
    plan_rewrite_position_delete_files,
)
from java_referee import Warehouse

NAMESPACE = "rewrite_plan"
TARGET = 24_000
MERGE_ON_READ = (
    "'format-version'='2', 'write.delete.mode'='merge-on-read', "
    f"'write.update.mode'='merge-on-read', 'write.target-file-size-bytes'='{TARGET}', "
    "'write.delete.target-file-size-bytes'='4000'"
)
CAT = "CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END"


@dataclass(frozen=True)
class Group:
    """A planned group, as both sides describe it."""

    partition: tuple[Any, ...]
    partition_index: int
    files: tuple[str, ...]
    input_bytes: int
    expected_output_files: int
    max_output_file_size: int
    input_split_size: int
    extra: tuple[Any, ...]  # output spec id (data) or max data sequence number (deletes)


@dataclass(frozen=True)
class Planned:
    groups: tuple[Group, ...]  # in the plan's order
    total_group_count: int


def _insert(tables: Warehouse, name: str, first: int, count: int, where: str = "") -> None:
    tables.sql(
        f"INSERT INTO {name} SELECT id, {CAT} AS cat, md5(CAST(id AS STRING)) AS payload "
        f"FROM range({first}, {first + count}) {where}"
    )


@pytest.fixture(scope="module")
def built(tables: Warehouse) -> dict[str, str]:
    """The two tables: name -> Spark name."""
    tables.sql(f"CREATE NAMESPACE IF NOT EXISTS {tables.catalog}.{NAMESPACE}")
    names = {t: tables.name(NAMESPACE, t) for t in ("files", "evolved")}
    for name in names.values():
        tables.sql(f"DROP TABLE IF EXISTS {name}")
        tables.sql(
            f"CREATE TABLE {name} (id bigint, cat string, payload string) USING iceberg "
            f"PARTITIONED BY (cat) TBLPROPERTIES ({MERGE_ON_READ})"
        )
    files = names["files"]
    _insert(tables, files, 0, 12_000)  # rolled into files around the target
    _insert(tables, files, 20_000, 1_500, "WHERE id % 3 = 1")  # one mid-sized file in b
    # One file above max-file-size-bytes (180% of the target) in c: written with a larger
    # target, which is then set back.
    tables.sql(f"ALTER TABLE {files} SET TBLPROPERTIES ('write.target-file-size-bytes'='1000000')")
    _insert(tables, files, 30_000, 9_000, "WHERE id % 3 = 2")
    tables.sql(f"ALTER TABLE {files} SET TBLPROPERTIES ('write.target-file-size-bytes'='{TARGET}')")
    for first in (100_000, 100_100, 100_200, 100_300, 100_400):
        _insert(tables, files, first, 30)  # small files, 10 rows a partition
    tables.sql(f"DELETE FROM {files} WHERE id % 97 = 0 AND id < 12000")
    tables.sql(f"DELETE FROM {files} WHERE id >= 100000 AND id < 100200 AND id % 2 = 0")
    tables.sql(f"DELETE FROM {files} WHERE id IN (100301, 100402)")

    evolved = names["evolved"]
    _insert(tables, evolved, 0, 600)
    for first in (100_000, 100_100):
        _insert(tables, evolved, first, 30)
    tables.sql(f"ALTER TABLE {evolved} ADD PARTITION FIELD bucket(2, id) AS id_bucket")
    for first in (200_000, 200_100, 200_200):
        _insert(tables, evolved, first, 30)
    tables.sql(f"DELETE FROM {evolved} WHERE id % 5 = 0")

    for name in names:
        tables.sql(
            f"CALL {tables.catalog}.system.rewrite_manifests(table => '{NAMESPACE}.{name}', "
            "use_caching => false)"
        )
    return names


def _struct(java: Any, struct: Any) -> tuple[Any, ...]:
    cls = java.java.lang.Class.forName("java.lang.Object")
    return tuple(struct.get(i, cls) for i in range(struct.size()))


def _iterate(iterable: Any) -> Iterator[Any]:
    iterator = iterable.iterator()
    while iterator.hasNext():
        yield iterator.next()


def _java_options(java: Any, options: Mapping[str, str]) -> Any:
    out = java.java.util.HashMap()
    for key, value in options.items():
        out.put(key, value)
    return out


def _java_data_plan(
    java: Any, tables: Warehouse, table: str, options: Mapping[str, str], java_filter: Any
) -> Planned:
    actions = java.org.apache.iceberg.actions
    loaded = tables.java_table(NAMESPACE, table)
    planner = (
        actions.BinPackRewriteFilePlanner(loaded)
        if java_filter is None
        else actions.BinPackRewriteFilePlanner(loaded, java_filter)
    )
    planner.init(_java_options(java, options))
    plan = planner.plan()
    groups = []
    for g in _iterate(plan.groups()):
        info = g.info()
        groups.append(
            Group(
                partition=_struct(java, info.partition()),
                partition_index=info.partitionIndex(),
                files=tuple(t.file().location() for t in g.fileScanTasks()),
                input_bytes=g.inputFilesSizeInBytes(),
                expected_output_files=g.expectedOutputFiles(),
                max_output_file_size=g.maxOutputFileSize(),
                input_split_size=g.inputSplitSize(),
                extra=(g.outputSpecId(),),
            )
        )
    return Planned(tuple(groups), plan.totalGroupCount())


def _java_delete_plan(
    java: Any, tables: Warehouse, table: str, options: Mapping[str, str]
) -> Planned:
    loaded = tables.java_table(NAMESPACE, table)
    planner = java.org.apache.iceberg.actions.BinPackRewritePositionDeletePlanner(loaded)
    planner.init(_java_options(java, options))
    plan = planner.plan()
    groups = []
    for g in _iterate(plan.groups()):
        info = g.info()
        groups.append(
            Group(
                partition=_struct(java, info.partition()),
                partition_index=info.partitionIndex(),
                files=tuple(t.file().location() for t in g.fileScanTasks()),
                input_bytes=g.inputFilesSizeInBytes(),
                expected_output_files=g.expectedOutputFiles(),
                max_output_file_size=g.maxOutputFileSize(),
                input_split_size=g.inputSplitSize(),
                extra=(g.maxRewrittenDataSequenceNumber(),),
            )
        )
    return Planned(tuple(groups), plan.totalGroupCount())


def _frazil(plan: RewritePlan[Any], data: bool) -> Planned:
    groups = []
    for g in plan.groups:
        files = g.file_paths if data else tuple(f.file_path for f in g.files)
        groups.append(
            Group(
                partition=tuple(g.info.partition.values()),
                partition_index=g.info.partition_index,
                files=tuple(files),
                input_bytes=g.input_bytes,
                expected_output_files=g.expected_output_files,
                max_output_file_size=g.max_output_file_size,
                input_split_size=g.input_split_size,
                extra=(g.output_spec_id,) if data else (g.max_rewritten_data_sequence_number,),
            )
        )
    return Planned(tuple(groups), plan.total_group_count)


def _same(java: Planned, ours: Planned, order: str) -> None:
    assert ours.total_group_count == java.total_group_count
    assert sorted(ours.groups, key=repr) == sorted(java.groups, key=repr)
    if order == "none":
        return
    key = "input_bytes" if order.startswith("bytes") else "files"

    def sort_key(g: Group) -> int:
        return g.input_bytes if key == "input_bytes" else len(g.files)

    # Java's sort is stable over its hash order: the keys' sequence is decided, and so is
    # every group whose key no other group has.
    assert [sort_key(g) for g in ours.groups] == [sort_key(g) for g in java.groups]
    counts: dict[int, int] = {}
    for g in java.groups:
        counts[sort_key(g)] = counts.get(sort_key(g), 0) + 1
    for mine, theirs in zip(ours.groups, java.groups, strict=True):
        if counts[sort_key(theirs)] == 1:
            assert mine == theirs


def _static(tables: Warehouse, table: str) -> frazil.StaticTable:
    return frazil.StaticTable.from_metadata(str(tables.current_metadata_file(NAMESPACE, table)))


DATA_CASES: list[tuple[str, dict[str, str], str | None]] = [
    ("files", {}, None),
    ("files", {"min-input-files": "2"}, None),
    ("files", {"rewrite-all": "true"}, None),
    ("files", {"delete-file-threshold": "1"}, None),
    ("files", {"delete-ratio-threshold": "0.01", "min-file-size-bytes": "0"}, None),
    ("files", {"max-file-group-size-bytes": "50000", "rewrite-all": "true"}, None),
    ("files", {"rewrite-job-order": "bytes-desc", "rewrite-all": "true"}, None),
    ("files", {"rewrite-job-order": "files-asc", "min-input-files": "2"}, None),
    ("files", {"min-input-files": "2"}, "id >= 100000"),  # the small files, by their metrics
    ("files", {"min-input-files": "2", "max-files-to-rewrite": "4"}, "cat = 'b'"),
    ("evolved", {"min-input-files": "2"}, None),
    ("evolved", {"rewrite-all": "true", "output-spec-id": "0"}, None),
]


def _java_filter(java: Any, text: str | None) -> Any:
    if text is None:
        return None
    expressions = java.org.apache.iceberg.expressions.Expressions
    if text == "id >= 100000":
        return expressions.greaterThanOrEqual("id", 100000)
    if text == "cat = 'b'":
        return expressions.equal("cat", "b")
    raise AssertionError(text)


def test_data_file_groups_match_java(java: Any, tables: Warehouse, built: dict[str, str]) -> None:
    seen_groups = 0
    for table, options, row_filter in DATA_CASES:
        java_plan = _java_data_plan(java, tables, table, options, _java_filter(java, row_filter))
        parsed = RewriteDataFilesOptions.parse(
            options, "binpack", _static(tables, table).properties
        )
        ours = _frazil(
            plan_rewrite_data_files(_static(tables, table), parsed, row_filter=row_filter), True
        )
        order = parsed.rewrite_job_order
        try:
            _same(java_plan, ours, order)
        except AssertionError as error:
            raise AssertionError(f"{table} {options} {row_filter}: {error}") from None
        seen_groups += len(ours.groups)
    assert seen_groups > 20  # the cases plan something


DELETE_CASES: list[tuple[str, dict[str, str]]] = [
    ("files", {}),
    ("files", {"min-input-files": "2"}),
    ("files", {"rewrite-all": "true"}),
    ("files", {"rewrite-all": "true", "max-file-group-size-bytes": "5000"}),
    ("files", {"rewrite-job-order": "bytes-asc", "rewrite-all": "true"}),
    ("evolved", {"rewrite-all": "true"}),
]


def test_position_delete_groups_match_java(
    java: Any, tables: Warehouse, built: dict[str, str]
) -> None:
    seen_groups = 0
    for table, options in DELETE_CASES:
        java_plan = _java_delete_plan(java, tables, table, options)
        parsed = RewritePositionDeleteFilesOptions.parse(options, _static(tables, table).properties)
        ours = _frazil(plan_rewrite_position_delete_files(_static(tables, table), parsed), False)
        try:
            _same(java_plan, ours, parsed.rewrite_job_order)
        except AssertionError as error:
            raise AssertionError(f"{table} {options}: {error}") from None
        seen_groups += len(ours.groups)
    assert seen_groups > 5
