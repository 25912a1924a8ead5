"""frazil's commit validations against Apache Iceberg Java 1.10.2's on the same concurrent
histories (spec: "Commit Conflict Resolution and Retry"; Java's ``MergingSnapshotProducer``,
``BaseRowDelta``, ``BaseOverwriteFiles`` and ``BaseRewriteFiles`` as Spark 3.5's
``SparkPositionDeltaWrite``, ``SparkWrite.CopyOnWriteOperation`` and
``RewriteDataFilesCommitManager`` configure them).

Each case is a history on a fresh table partitioned by ``cat`` (data files ids ``1..3`` and
``4..6`` in ``a``, ``10..12`` in ``b``, column ``v`` = ``"v0"``; the last append is S0). A
change B is built by frazil on a handle loaded at S0 (its files written, its snapshot staged
in a transaction); a concurrent operation A then commits through another handle (S1, one or
more commits); B commits second:

- Java: B's files (frazil's: the validation logic is compared, not the writers) are committed
  through Java's API with the validations Spark would configure for that command, write mode
  and isolation level (tests/interop/java/ConflictReferee.java; the data files B removes are
  Java's own, planned at S0 with their metrics). When Java commits, frazil reads the rows of
  Java's snapshot and Java sets the branch back to S1.
- frazil: B's transaction commits (its first attempt loses the race, the retry validates).

B's outcome ("commits", or "fails": a ``ValidationException`` in Java, a
``CommitValidationError`` in frazil) must be the case's on both sides and the rows after B as
the case says. Where the two disagree, the case says what Java does (``java=``, ``java_rows=``)
and why (``why``): frazil follows the spec where Java contradicts it, and the other
disagreements are reported, not hidden.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.errors import CommitValidationError
from frazil.expressions import from_json
from frazil.manifest import DataFile
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.maintenance.rewrite_data_files import _local_rewriter, rewrite_data_files
from frazil.table.snapshot.producer import SnapshotProducer
from frazil.table.snapshot.row_delta import RowDelta
from frazil.table.transaction import Transaction
from frazil.types import NestedField, parse_type
from java_referee import Warehouse

pytestmark = pytest.mark.interop

NAMESPACE = "conflict_history"
SERIALIZABLE = "serializable"
SNAPSHOT = "snapshot"
COMMITS = "commits"
FAILS = "fails"
BASE = [([1, 2, 3], "a"), ([4, 5, 6], "a"), ([10, 11, 12], "b")]
ALL = "1 2 3 4 5 6 10 11 12"

Json = Any
Stage = Callable[[Transaction], Any]
TableOp = Callable[[Table], None]


# --- filters: Java's ExpressionParser JSON, read by frazil with from_json -------------------


def eq(column: str, value: Any) -> Json:
    return {"type": "eq", "term": column, "value": value}


def le(column: str, value: Any) -> Json:
    return {"type": "lt-eq", "term": column, "value": value}


def ge(column: str, value: Any) -> Json:
    return {"type": "gt-eq", "term": column, "value": value}


def both(left: Json, right: Json) -> Json:
    return {"type": "and", "left": left, "right": right}


def key_range(low: int, high: int) -> Json:
    """The conflict filter of a merge on ``id`` whose source keys span [low, high]: frazil
    validates with that range; Spark pushes it for ``ON t.id = s.id AND t.id BETWEEN low AND
    high`` (a plain ``ON t.id = s.id`` pushes nothing: alwaysTrue)."""
    return both(ge("id", low), le("id", high))


# --- operations ----------------------------------------------------------------------------


def _cat(i: int) -> str:
    return "a" if i < 10 or 20 <= i < 30 else "b"


def _rows(ids: list[int], v: str = "v0") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([_cat(i) for i in ids]),
            "v": pa.array([v] * len(ids)),
        }
    )


def append(ids: list[int]) -> Stage:
    return lambda txn: txn.append(_rows(ids))


def delete(where: Json) -> Stage:
    return lambda txn: txn.delete(from_json(where, txn.staged_metadata.schema()))


def update(where: Json, v: str) -> Stage:
    return lambda txn: txn.update({"v": v}, from_json(where, txn.staged_metadata.schema()))


def upsert(ids: list[int], v: str, on: tuple[str, ...] = ("id",)) -> Stage:
    return lambda txn: txn.upsert(_rows(ids, v), list(on))


def merge_update(ids: list[int], v: str) -> Stage:
    """MERGE ... ON id WHEN MATCHED THEN UPDATE SET * (no inserts)."""
    return lambda txn: txn.merge(_rows(ids, v), "id").when_matched_update().execute()


def delete_keys(ids: list[int], add: list[int] | None = None, v: str = "v0") -> Stage:
    """A row delta of global equality deletes of ``ids`` (and the new rows ``add``)."""

    def run(txn: Transaction) -> None:
        keys = pa.table({"id": pa.array(ids, pa.int64())})
        txn.row_delta(add=_rows(add, v) if add else None, delete_keys=keys, key_columns=["id"])

    return run


def commits(*stages: Stage) -> TableOp:
    """A: each stage committed on its own (one snapshot each)."""

    def run(table: Table) -> None:
        for stage in stages:
            with table.transaction() as txn:
                stage(txn)

    return run


def rollback(table: Table) -> None:
    """A: main set back to the parent of S0 (S0 is no longer an ancestor)."""
    head = table.current_snapshot()
    assert head is not None and head.parent_snapshot_id is not None
    with table.manage_snapshots() as ms:
        ms.rollback_to(head.parent_snapshot_id)


@dataclass(frozen=True)
class Change:
    """B: a row-level command (``delete``, ``update``, ``merge``: the table's
    ``write.<command>.mode`` decides its mode), a ``row-delta`` of equality deletes, or a
    ``rewrite`` (rewrite_data_files with ``options``). ``conflict_filter``: the scan filter
    Spark validates with."""

    command: str
    stage: Stage | None = None
    conflict_filter: Json = True
    options: Mapping[str, str] = field(default_factory=dict)


def b_delete(where: Json) -> Change:
    return Change("delete", delete(where), where)


def b_update(where: Json, v: str) -> Change:
    return Change("update", update(where, v), where)


def b_rewrite(**options: str) -> Change:
    return Change("rewrite", options={"rewrite-all": "true", **options})


MOR = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
COW = {
    "write.delete.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}


@dataclass(frozen=True)
class Case:
    name: str
    concurrent: TableOp
    change: Change
    expected: str
    rows: str  # after B: "id" (v0) or "id=v", any order
    modes: Mapping[str, str]
    versions: tuple[int, ...] = (2,)
    level: str = SERIALIZABLE
    java: str | None = None  # Java's outcome, where it differs
    java_rows: str | None = None  # the rows of Java's snapshot, where they differ
    why: str = ""


def _without(*ids: int, extra: str = "") -> str:
    kept = [t for t in ALL.split() if int(t) not in ids]
    return " ".join([*kept, *extra.split()])


def _matrix() -> list[Case]:
    """Every row-level command, in both modes, against a concurrent append of a row its
    filter matches (id 2) or not (id 20), under both isolation levels: only serializable
    isolation with matching rows conflicts; otherwise the appended row stays."""
    commands = [
        ("mor_delete", MOR, b_delete(eq("id", 2)), _without(2)),
        ("cow_delete", COW, b_delete(eq("id", 2)), _without(2)),
        ("mor_update", MOR, b_update(eq("id", 2), "u"), _without(2, extra="2=u")),
        ("cow_update", COW, b_update(eq("id", 2), "u"), _without(2, extra="2=u")),
        (
            "mor_merge",
            MOR,
            Change("merge", merge_update([2], "m"), key_range(2, 2)),
            _without(2, extra="2=m"),
        ),
        (
            "cow_merge",
            COW,
            Change("merge", merge_update([2], "m"), key_range(2, 2)),
            _without(2, extra="2=m"),
        ),
    ]
    cases = []
    for name, modes, change, after in commands:
        # Deletion vectors (v3) change what merge-on-read writes: both versions there.
        versions = (2, 3) if modes is MOR else (2,)
        for level in (SERIALIZABLE, SNAPSHOT):
            fails = level == SERIALIZABLE
            cases.append(
                Case(
                    f"{name}_vs_matching_append_{level}",
                    commits(append([2])),
                    change,
                    FAILS if fails else COMMITS,
                    f"{ALL} 2" if fails else f"{after} 2",
                    modes,
                    versions,
                    level,
                )
            )
            cases.append(
                Case(
                    f"{name}_vs_other_append_{level}",
                    commits(append([20])),
                    change,
                    COMMITS,
                    f"{after} 20",
                    modes,
                    level=level,
                )
            )
    return cases


CASES: list[Case] = [
    *_matrix(),
    # A copy-on-write update (an overwrite) rewrote the file B's position deletes reference.
    Case(
        "cow_rewrite_of_the_file_of_a_mor_delete",
        commits(update(eq("id", 3), "u")),
        b_delete(eq("id", 2)),
        FAILS,
        _without(3, extra="3=u"),
        {**MOR, "write.update.mode": "copy-on-write"},
        (2, 3),
    ),
    # A delete dropped the whole file: validateDataFilesExist skips ``delete`` snapshots
    # unless validateDeletedFiles, which DELETE does not ask for and UPDATE and MERGE do.
    Case(
        "whole_file_delete_vs_mor_delete",
        commits(delete(le("id", 3))),
        b_delete(eq("id", 2)),
        COMMITS,
        _without(1, 2, 3),
        MOR,
        (2, 3),
    ),
    Case(
        "whole_file_delete_vs_mor_update",
        commits(delete(le("id", 3))),
        b_update(eq("id", 2), "u"),
        FAILS,
        _without(1, 2, 3),
        MOR,
        (2, 3),
    ),
    Case(
        "whole_file_delete_vs_whole_file_mor_delete",
        commits(delete(le("id", 3))),
        b_delete(le("id", 3)),
        FAILS,
        _without(1, 2, 3),
        MOR,
        java=COMMITS,
        why="spec: a delete of specific files verifies they are still there; Java's RowDelta "
        "skips missing files without validateDeletedFiles",
    ),
    # Deletion vectors for one data file: the second would lose the first's positions.
    Case(
        "two_dvs_for_one_file",
        commits(delete(eq("id", 1))),
        b_delete(eq("id", 2)),
        FAILS,
        _without(1),
        MOR,
        (3,),
    ),
    Case(
        "dvs_for_two_files_of_one_partition",
        commits(delete(eq("id", 4))),
        b_delete(eq("id", 2)),
        COMMITS,
        _without(2, 4),
        MOR,
        (3,),
    ),
    # v2: position delete files for one data file all apply.
    Case(
        "two_position_deletes_for_one_file",
        commits(delete(eq("id", 1))),
        b_delete(eq("id", 2)),
        COMMITS,
        _without(1, 2),
        MOR,
    ),
    Case(
        "mor_delete_vs_mor_delete_of_the_same_row",
        commits(delete(eq("id", 2))),
        b_delete(eq("id", 2)),
        COMMITS,
        _without(2),
        MOR,
    ),
    Case(
        "mor_delete_vs_mor_update_of_the_same_row",
        commits(delete(eq("id", 2))),
        b_update(eq("id", 2), "u"),
        FAILS,
        _without(2),
        MOR,
        (2, 3),
    ),
    # Compaction of every file (planned at S0) against concurrent changes.
    Case(
        "rewrite_vs_mor_delete_of_a_rewritten_file",
        commits(delete(eq("id", 2))),
        b_rewrite(),
        FAILS,
        _without(2),
        MOR,
        (2, 3),
    ),
    Case(
        "rewrite_vs_append",
        commits(append([20, 30])),
        b_rewrite(),
        COMMITS,
        f"{ALL} 20 30",
        MOR,
        (2, 3),
    ),
    # The rewritten files keep S0's data sequence number: equality deletes committed since
    # still apply to them, so they are no conflict.
    Case(
        "rewrite_with_starting_sequence_number_vs_equality_delete",
        commits(delete_keys([2])),
        b_rewrite(),
        COMMITS,
        _without(2),
        MOR,
        (2, 3),
    ),
    Case(
        "rewrite_with_starting_sequence_number_vs_equality_delete_then_append",
        commits(delete_keys([2]), append([20])),
        b_rewrite(),
        COMMITS,
        _without(2, extra="20"),
        MOR,
        (2, 3),
        java_rows=f"{ALL} 20",
        why="spec: a replace does not change the data; Java drops the equality delete, older "
        "than every committed data file but not than its own rewritten files, and row 2 comes "
        "back (apache/iceberg#10962)",
    ),
    Case(
        "rewrite_with_new_sequence_number_vs_equality_delete",
        commits(delete_keys([2])),
        b_rewrite(**{"use-starting-sequence-number": "false"}),
        FAILS,
        _without(2),
        MOR,
    ),
    # Equality deletes validated against every row: any concurrent data conflicts under
    # serializable isolation, none under snapshot isolation.
    Case(
        "equality_row_delta_vs_append_serializable",
        commits(append([30])),
        Change("row-delta", delete_keys([2], add=[2], v="e")),
        FAILS,
        f"{ALL} 30",
        MOR,
        (2, 3),
    ),
    Case(
        "equality_row_delta_vs_append_snapshot",
        commits(append([30])),
        Change("row-delta", delete_keys([2], add=[2], v="e")),
        COMMITS,
        _without(2, extra="2=e 30"),
        MOR,
        (2, 3),
        SNAPSHOT,
    ),
    # Upserts of one key: the second finds the first's deletes (and, serializable, its row).
    *(
        Case(
            f"upsert_vs_upsert_of_the_same_key_{level}",
            commits(upsert([2], "A")),
            Change("merge", upsert([2], "B"), key_range(2, 2)),
            FAILS,
            _without(2, extra="2=A"),
            MOR,
            (2, 3),
            level,
        )
        for level in (SERIALIZABLE, SNAPSHOT)
    ),
    Case(
        "cow_upsert_vs_upsert_of_the_same_key",
        commits(upsert([2], "A")),
        Change("merge", upsert([2], "B"), key_range(2, 2)),
        FAILS,
        _without(2, extra="2=A"),
        COW,
    ),
    # Keyed by id, a merge's filter holds no partition, and position deletes and DVs carry no
    # metrics on id: any concurrent delete file may hold a matching row.
    Case(
        "upsert_vs_upsert_of_a_key_of_another_partition",
        commits(upsert([11], "A")),
        Change("merge", upsert([2], "B"), key_range(2, 2)),
        FAILS,
        _without(11, extra="11=A"),
        MOR,
    ),
    # Keyed by (id, cat): the filter holds the partition, the other's deletes are elsewhere.
    Case(
        "upsert_by_id_and_partition_vs_upsert_in_another_partition",
        commits(upsert([11], "A", ("id", "cat"))),
        Change(
            "merge",
            upsert([2], "B", ("id", "cat")),
            both(key_range(2, 2), both(ge("cat", "a"), le("cat", "a"))),
        ),
        COMMITS,
        _without(2, 11, extra="2=B 11=A"),
        MOR,
        (2, 3),
    ),
    # The branch was set back past S0: there is no history to validate against.
    Case(
        "mor_delete_after_a_rollback_past_its_start",
        rollback,
        b_delete(eq("id", 2)),
        FAILS,
        "1 2 3 4 5 6",
        MOR,
    ),
    Case(
        "cow_delete_after_a_rollback_past_its_start",
        rollback,
        b_delete(eq("id", 2)),
        FAILS,
        "1 2 3 4 5 6",
        COW,
    ),
    # A copy-on-write delete rewrites file 1..3; a concurrent merge-on-read update deletes a
    # row of file 4..6 (same partition): a delete file its filter may touch, applying to
    # none of the files it rewrites. Spark's CopyOnWriteOperation removes files by name and
    # checks only deletes for them: both commit.
    Case(
        "cow_delete_vs_mor_update_of_another_file",
        commits(update(eq("id", 5), "u")),
        b_delete(eq("id", 2)),
        COMMITS,
        _without(2, 5, extra="5=u"),
        {**COW, "write.update.mode": "merge-on-read"},
        (2, 3),
    ),
]


# --- the harness -----------------------------------------------------------------------------


def _create(catalog: FileSystemCatalog, name: str, case: Case, version: int) -> None:
    """The base table: created unpartitioned (spec 0, where global equality deletes go),
    then partitioned by cat; three appends, the last one S0."""
    properties = {
        "commit.retry.min-wait-ms": "1",
        "commit.retry.max-wait-ms": "5",
        "write.delete.isolation-level": case.level,
        "write.update.isolation-level": case.level,
        "write.merge.isolation-level": case.level,
        **case.modes,
    }
    schema = Schema(
        NestedField(1, "id", parse_type("long"), True),
        NestedField(2, "cat", parse_type("string"), True),
        NestedField(3, "v", parse_type("string"), False),
    )
    table = catalog.create_table(
        f"{NAMESPACE}.{name}",
        schema,
        partition_spec=PartitionSpec(0, ()),
        format_version=version,
        properties=properties,
    )
    with table.update_spec() as spec:
        spec.add_identity("cat")
    for ids, _ in BASE:
        table.append(_rows(ids))


def _file(metadata: TableMetadata, spec_id: int, file: DataFile) -> Json:
    """A file frazil wrote, as ConflictReferee builds it again."""
    spec = metadata.spec_by_id(spec_id)
    assert spec is not None
    partition = file.partition or {}

    def counts(values: Mapping[int, int] | None) -> Json:
        return None if values is None else {str(k): int(v) for k, v in values.items()}

    def bounds(values: Mapping[int, bytes] | None) -> Json:
        return None if values is None else {str(k): bytes(v).hex() for k, v in values.items()}

    return {
        "content": file.content or 0,
        "path": file.file_path,
        "format": file.file_format,
        "spec-id": spec_id,
        "partition": [partition.get(f.name) for f in spec.fields],
        "record-count": file.record_count,
        "size": file.file_size_in_bytes,
        "column-sizes": counts(file.column_sizes),
        "value-counts": counts(file.value_counts),
        "null-value-counts": counts(file.null_value_counts),
        "nan-value-counts": counts(file.nan_value_counts),
        "lower-bounds": bounds(file.lower_bounds),
        "upper-bounds": bounds(file.upper_bounds),
        "equality-ids": file.equality_ids,
        "referenced-data-file": file.referenced_data_file,
        "content-offset": file.content_offset,
        "content-size": file.content_size_in_bytes,
        "split-offsets": file.split_offsets,
    }


def _spark_validations(command: str, mode: str, level: str) -> tuple[str, dict[str, bool]]:
    """Java's kind of change and the validations Spark 3.5 asks for: SparkPositionDeltaWrite
    (merge-on-read; UPDATE and MERGE also validate deleted files and conflicting deletes),
    SparkWrite.CopyOnWriteOperation (copy-on-write); serializable isolation adds conflicting
    data. frazil's row deltas of equality deletes are validated as its row-level commands
    (stage_row_delta: conflicting deletes, and data when serializable)."""
    serializable = level == SERIALIZABLE
    if command == "row-delta":
        return "row-delta", {
            "validate-no-conflicting-deletes": True,
            "validate-no-conflicting-data": serializable,
        }
    if mode == "merge-on-read":
        checks_deletes = command in ("update", "merge")
        return "row-delta", {
            "validate-deleted-files": checks_deletes,
            "validate-no-conflicting-deletes": checks_deletes,
            "validate-no-conflicting-data": serializable,
        }
    return "overwrite", {
        "validate-no-conflicting-deletes": True,
        "validate-no-conflicting-data": serializable,
    }


@dataclass
class JavaOutcome:
    outcome: str
    message: str
    rows: list[tuple[Any, ...]] | None


def _rows_of(table: Table, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    data = table.scan(snapshot_id=snapshot_id).to_arrow()
    return sorted(zip(*(data.column(c).to_pylist() for c in ("id", "cat", "v")), strict=True))


@dataclass
class Referee:
    """Between B's build and frazil's commit of B: A commits, then Java commits B's files as
    Spark would; when it lands, frazil reads Java's snapshot and Java sets main back to S1."""

    java: Any
    java_catalog: Any
    catalog: FileSystemCatalog
    identifier: str
    concurrent: TableOp
    result: JavaOutcome | None = None

    def __call__(self, change: Json) -> None:
        self.concurrent(self.catalog.load_table(self.identifier))
        s1 = self.catalog.load_table(self.identifier).current_snapshot()
        assert s1 is not None
        referee = self.java.org.frazil.interop.ConflictReferee
        table = self.java_catalog.loadTable(
            self.java.org.apache.iceberg.catalog.TableIdentifier.parse(self.identifier)
        )
        answer = str(referee.commit(table, json.dumps(change)))
        kind, _, message = answer.partition(":")
        if kind == "committed":
            rows = _rows_of(self.catalog.load_table(self.identifier), int(message))
            referee.rollbackTo(table, s1.snapshot_id)
            self.result = JavaOutcome(COMMITS, f"snapshot {message}", rows)
        else:
            assert kind in ("refused", "not-ancestor"), answer
            self.result = JavaOutcome(FAILS, f"{kind}: {message}", None)


def _staged_change(handle: Table, case: Case, referee: Referee) -> tuple[str, str]:
    """B staged on ``handle`` (at S0), Java's side run, then B committed by frazil."""
    change = case.change
    assert change.stage is not None
    txn = handle.transaction()
    change.stage(txn)
    producers = [c for c in txn._changes if isinstance(c, SnapshotProducer)]
    assert producers, f"{case.name}: B changes nothing"
    producer = producers[-1]
    metadata = txn.staged_metadata
    start = handle.current_snapshot()
    assert start is not None and producer.starting_snapshot_id == start.snapshot_id
    mode = handle.properties.get(f"write.{change.command}.mode", "copy-on-write")
    kind, checks = _spark_validations(change.command, mode, case.level)
    # Spark's row deltas name the data files their position deletes reference and remove
    # the deletion vectors their new ones replace; its copy-on-write removes the vectors of
    # the files it rewrites (ConflictReferee finds them at S0).
    row_delta = isinstance(producer, RowDelta)
    referee(
        {
            "kind": kind,
            "start": start.snapshot_id,
            "filter": change.conflict_filter,
            "add-data": [_file(metadata, s, f) for s, f in producer.added_files],
            "add-deletes": [_file(metadata, s, f) for s, f in producer.added_deletes],
            "remove-data": sorted(producer._delete_paths),
            "remove-deletes": [[p, o] for p, o in producer._removed_deletes] if row_delta else [],
            "remove-dangling-dvs": kind == "overwrite",
            "referenced": sorted(producer.referenced_data_files) if row_delta else [],
            **checks,
        }
    )
    try:
        txn.commit_transaction()
    except CommitValidationError as error:
        return FAILS, str(error)
    return COMMITS, ""


def _compaction(handle: Table, case: Case, referee: Referee) -> tuple[str, str]:
    """B is rewrite_data_files planned at S0; A and Java's side run between the rewrite of
    the groups and frazil's commit (the ``rewriter`` hook). Java commits as its
    RewriteDataFilesCommitManager does: validated from S0, S0's sequence number kept unless
    use-starting-sequence-number is false, the rewritten files' DVs removed."""
    start = handle.current_snapshot()
    assert start is not None
    options = dict(case.change.options)
    keep_sequence = options.get("use-starting-sequence-number", "true") == "true"

    def rewriter(metadata: TableMetadata, order: Any, parsed: Any) -> Any:
        local = _local_rewriter(metadata, handle.io, order, 1, lambda n: None)

        def rewrite(groups: Any) -> list[list[DataFile]]:
            written = local(groups)
            added = [
                _file(metadata, g.output_spec_id, f)
                for g, files in zip(groups, written, strict=True)
                for f in files
            ]
            referee(
                {
                    "kind": "rewrite",
                    "start": start.snapshot_id,
                    "filter": None,
                    "add-data": added,
                    "add-deletes": [],
                    "remove-data": sorted(p for g in groups for p in g.file_paths),
                    "remove-deletes": [],
                    "remove-dangling-dvs": True,
                    "referenced": [],
                    "data-sequence-number": start.sequence_number if keep_sequence else None,
                }
            )
            return written

        return rewrite

    try:
        rewrite_data_files(handle, options=options, rewriter=rewriter)
    except CommitValidationError as error:
        return FAILS, str(error)
    return COMMITS, ""


def _id_v(text: str) -> list[tuple[int, str]]:
    out = []
    for token in text.split():
        key, _, v = token.partition("=")
        out.append((int(key), v or "v0"))
    return sorted(out)


@dataclass
class Decision:
    case: Case
    version: int
    java: JavaOutcome
    frazil: str
    frazil_message: str
    frazil_rows: list[tuple[Any, ...]]
    seconds: float

    def problems(self) -> list[str]:
        case, java = self.case, self.java
        where = f"{case.name} (v{self.version})"
        out = []
        java_expected = case.java or case.expected
        if java.outcome != java_expected:
            out.append(f"{where}: Java {java.outcome}, expected {java_expected}: {java.message}")
        if self.frazil != case.expected:
            out.append(
                f"{where}: frazil {self.frazil}, expected {case.expected}: {self.frazil_message}"
            )
        if [(r[0], r[2]) for r in self.frazil_rows] != _id_v(case.rows):
            out.append(f"{where}: frazil's rows {self.frazil_rows}, expected {case.rows}")
        if java.rows is not None:
            java_rows = case.java_rows or case.rows
            if [(r[0], r[2]) for r in java.rows] != _id_v(java_rows):
                out.append(f"{where}: Java's rows {java.rows}, expected {java_rows}")
            if self.frazil == COMMITS and case.java_rows is None and java.rows != self.frazil_rows:
                out.append(f"{where}: Java's rows {java.rows} != frazil's {self.frazil_rows}")
        return out


def _run(
    java: Any, java_catalog: Any, catalog: FileSystemCatalog, case: Case, version: int
) -> Decision:
    started = time.monotonic()
    identifier = f"{NAMESPACE}.{case.name}_v{version}"
    _create(catalog, identifier.split(".")[1], case, version)
    handle = catalog.load_table(identifier)
    referee = Referee(java, java_catalog, catalog, identifier, case.concurrent)
    if case.change.command == "rewrite":
        frazil, message = _compaction(handle, case, referee)
    else:
        frazil, message = _staged_change(handle, case, referee)
    assert referee.result is not None, f"{identifier}: Java's side never ran"
    rows = _rows_of(catalog.load_table(identifier))
    return Decision(
        case, version, referee.result, frazil, message, rows, time.monotonic() - started
    )


def test_commit_validations_decide_as_java(java: Any, tables: Warehouse) -> None:
    catalog = FileSystemCatalog("fs", warehouse=str(tables.root))
    catalog.create_namespace(NAMESPACE)
    java_catalog = tables.java_catalog()
    started = time.monotonic()
    decisions = [
        _run(java, java_catalog, catalog, case, version)
        for case in CASES
        for version in case.versions
    ]
    elapsed = time.monotonic() - started
    lines = [
        f"  {d.case.name:<68} v{d.version}  java={d.java.outcome:<8} frazil={d.frazil:<8}"
        f"{d.seconds:5.2f}s" + (f"  ({d.case.why})" if d.case.why else "")
        for d in decisions
    ]
    sys.stderr.write(f"\n[conflict parity] {len(decisions)} histories in {elapsed:.1f}s\n")
    sys.stderr.write("\n".join(lines) + "\n")
    problems = [p for d in decisions for p in d.problems()]
    assert not problems, "\n".join(problems)
