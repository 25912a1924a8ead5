"""The planners of rewrite_data_files and rewrite_position_delete_files
(frazil.table.maintenance.rewrite_plan): every option's effect, defaults from table properties,
Java's validation messages, bin-packing, group filters, job order, commit batching; with light
fakes of scan tasks and delete files, and once on a real table."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil.errors import CommitFailedError, InvalidValueError, ValidationError
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table.maintenance.rewrite_plan import (
    FileGroupFailureResult,
    FileGroupRewriteResult,
    PositionDeletesGroupRewriteResult,
    RewriteDataFilesOptions,
    RewriteDataFilesResult,
    RewritePlan,
    RewritePositionDeleteFilesOptions,
    RewritePositionDeleteFilesResult,
    check_failed_commits,
    commit_batches,
    is_file_scoped,
    pack,
    plan_data_file_groups,
    plan_position_delete_groups,
    plan_rewrite_data_files,
    plan_rewrite_position_delete_files,
)
from frazil.types import LongType, StringType, optional, required
from hypothesis import given
from hypothesis import strategies as st
from maintenance_helpers import make_table
from snapshot_delete_helpers import commit_deletes, deletion_vector, position_deletes

MiB = 1024 * 1024
FILE_PATH_ID = 2147483546
SCHEMA = Schema(required(1, "id", LongType()), optional(2, "cat", StringType()))
SPEC = PartitionSpec(PartitionField(2, 1000, "identity", "cat"), spec_id=0)
SPEC_BUCKET = PartitionSpec(
    PartitionField(2, 1000, "identity", "cat"),
    PartitionField(1, 1001, "bucket[4]", "id_bucket"),
    spec_id=1,
)
UNPARTITIONED = PartitionSpec(spec_id=2)
SPECS = {0: SPEC, 1: SPEC_BUCKET, 2: UNPARTITIONED}


@dataclass(frozen=True)
class FakeDelete:
    file_path: str
    content: int = 1
    file_format: str = "PARQUET"
    record_count: int = 1
    referenced_data_file: str | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None


@dataclass(frozen=True)
class FakeFile:
    file_path: str
    file_size_in_bytes: int
    record_count: int = 100
    spec_id: int = 0
    partition: dict[str, Any] = field(default_factory=lambda: {"cat": "a"})


@dataclass(frozen=True)
class FakeTask:
    file: FakeFile
    delete_files: tuple[FakeDelete, ...] = ()


_names = iter(range(10**9))


def task(size: int, cat: str | None = "a", *, deletes: int = 0, **kwargs: Any) -> FakeTask:
    spec_id = kwargs.pop("spec_id", 0)
    partition = kwargs.pop("partition", {"cat": cat} if spec_id == 0 else {})
    path = f"/t/data/{next(_names)}.parquet"
    file = FakeFile(path, size, spec_id=spec_id, partition=partition, **kwargs)
    return FakeTask(file, tuple(FakeDelete(f"{path}-del{i}") for i in range(deletes)))


def options(
    given_options: dict[str, object] | None = None, **props: str
) -> RewriteDataFilesOptions:
    # A target of 100 bytes: min 75, max 180, the writer's size 140.
    properties = {"write.target-file-size-bytes": "100", **props}
    return RewriteDataFilesOptions.parse(given_options, "binpack", properties)


def plan(
    tasks: list[FakeTask], given_options: dict[str, object] | None = None, current: int = 0
) -> RewritePlan[Any]:
    return plan_data_file_groups(
        tasks, options(given_options), specs=SPECS, current_spec_id=current
    )


def paths(p: RewritePlan[Any]) -> list[list[str]]:
    return [list(g.file_paths) for g in p.groups]


def file_paths(tasks: list[FakeTask]) -> list[str]:
    return [t.file.file_path for t in tasks]


# --- options ---------------------------------------------------------------------------------


def test_data_defaults_are_javas() -> None:
    o = RewriteDataFilesOptions.parse()
    assert o.target_file_size_bytes == 512 * MiB
    assert o.min_file_size_bytes == int(512 * MiB * 0.75)
    assert o.max_file_size_bytes == int(512 * MiB * 1.8)
    assert (o.min_input_files, o.rewrite_all) == (5, False)
    assert o.max_file_group_size_bytes == 100 * 1024 * MiB
    assert (o.delete_file_threshold, o.delete_ratio_threshold) == (2**31 - 1, 0.3)
    assert (o.rewrite_job_order, o.max_files_to_rewrite, o.output_spec_id) == ("none", None, None)
    assert (o.partial_progress_enabled, o.partial_progress_max_commits) == (False, 10)
    assert o.partial_progress_max_failed_commits == 10
    assert o.max_concurrent_file_group_rewrites == 5
    assert (o.use_starting_sequence_number, o.remove_dangling_deletes) == (True, False)
    assert (o.compression_factor, o.shuffle_partitions_per_file) == (None, None)
    assert o.write_max_file_size == int(512 * MiB + (o.max_file_size_bytes - 512 * MiB) * 0.5)


def test_sort_defaults_and_options() -> None:
    o = RewriteDataFilesOptions.parse(None, "sort")
    assert (o.compression_factor, o.shuffle_partitions_per_file) == (1.0, 1)
    o = RewriteDataFilesOptions.parse(
        {"compression-factor": "2.5", "shuffle-partitions-per-file": 4}, "sort"
    )
    assert (o.compression_factor, o.shuffle_partitions_per_file) == (2.5, 4)
    assert o.shuffle_partitions(3) == 12


def test_position_delete_defaults_are_javas() -> None:
    o = RewritePositionDeleteFilesOptions.parse()
    assert o.target_file_size_bytes == 64 * MiB
    assert (o.min_file_size_bytes, o.max_file_size_bytes) == (
        int(64 * MiB * 0.75),
        int(64 * MiB * 1.8),
    )
    assert (o.min_input_files, o.rewrite_all, o.rewrite_job_order) == (5, False, "none")
    assert (o.partial_progress_enabled, o.partial_progress_max_commits) == (False, 10)
    assert o.max_concurrent_file_group_rewrites == 5


def test_target_size_defaults_from_table_properties() -> None:
    props = {"write.target-file-size-bytes": "1000", "write.delete.target-file-size-bytes": "400"}
    data = RewriteDataFilesOptions.parse(None, "binpack", props)
    assert (data.target_file_size_bytes, data.min_file_size_bytes, data.max_file_size_bytes) == (
        1000,
        750,
        1800,
    )
    deletes = RewritePositionDeleteFilesOptions.parse(None, props)
    assert (deletes.target_file_size_bytes, deletes.min_file_size_bytes) == (400, 300)
    # The option wins over the property; min and max follow the option's target.
    data = RewriteDataFilesOptions.parse({"target-file-size-bytes": 2000}, "binpack", props)
    assert (data.min_file_size_bytes, data.max_file_size_bytes) == (1500, 3600)


def test_values_as_strings_or_python_values() -> None:
    a = RewriteDataFilesOptions.parse(
        {
            "min-input-files": "2",
            "rewrite-all": "TRUE",
            "delete-ratio-threshold": "0.5",
            "max-files-to-rewrite": "+7",
            "partial-progress.enabled": "false",
            "output-spec-id": "3",
        }
    )
    b = RewriteDataFilesOptions.parse(
        {
            "min-input-files": 2,
            "rewrite-all": True,
            "delete-ratio-threshold": 0.5,
            "max-files-to-rewrite": 7,
            "partial-progress.enabled": False,
            "output-spec-id": 3,
        }
    )
    assert a == b
    assert (a.min_input_files, a.rewrite_all, a.max_files_to_rewrite, a.output_spec_id) == (
        2,
        True,
        7,
        3,
    )
    # None is "not set", as a null in Java's option map.
    assert RewriteDataFilesOptions.parse({"min-input-files": None}).min_input_files == 5
    # Double.parseDouble's forms: exponents, a d/f suffix, spaces around.
    assert (
        RewriteDataFilesOptions.parse({"delete-ratio-threshold": " 5e-1d "}).delete_ratio_threshold
        == 0.5
    )


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("bytes-asc", "bytes-asc"),
        ("BYTES-DESC", "bytes-desc"),
        ("files_asc", "files-asc"),
        ("Files-Desc", "files-desc"),
        ("NONE", "none"),
    ],
)
def test_job_order_names_as_java_reads_them(text: str, order: str) -> None:
    assert RewriteDataFilesOptions.parse({"rewrite-job-order": text}).rewrite_job_order == order
    assert (
        RewritePositionDeleteFilesOptions.parse({"rewrite-job-order": text}).rewrite_job_order
        == order
    )


@pytest.mark.parametrize(
    ("given_options", "message"),
    [
        ({"target-file-size-bytes": 0}, "'target-file-size-bytes' is set to 0 but must be > 0"),
        ({"min-file-size-bytes": -1}, "'min-file-size-bytes' is set to -1 but must be >= 0"),
        (
            {"min-file-size-bytes": 100},
            "'target-file-size-bytes' (100) must be > 'min-file-size-bytes' (100), all new files "
            "will be smaller than the min threshold",
        ),
        (
            {"max-file-size-bytes": 100},
            "'target-file-size-bytes' (100) must be < 'max-file-size-bytes' (100), all new files "
            "will be larger than the max threshold",
        ),
        # Java's defaults for a target of 1: min 0, max 1, so the target is not below the max.
        (
            {"target-file-size-bytes": 1},
            "'target-file-size-bytes' (1) must be < 'max-file-size-bytes' (1)",
        ),
        ({"min-input-files": 0}, "'min-input-files' is set to 0 but must be > 0"),
        (
            {"max-file-group-size-bytes": 0},
            "'max-file-group-size-bytes' is set to 0 but must be > 0",
        ),
        ({"delete-file-threshold": -1}, "'delete-file-threshold' is set to -1 but must be >= 0"),
        ({"delete-ratio-threshold": 0}, "'delete-ratio-threshold' is set to 0.0 but must be > 0"),
        (
            {"delete-ratio-threshold": "1.5"},
            "'delete-ratio-threshold' is set to 1.5 but must be <= 1",
        ),
        ({"rewrite-job-order": "biggest"}, "Invalid rewrite job order name: biggest"),
        (
            {"max-files-to-rewrite": 0},
            "Cannot set max-files-to-rewrite to 0, the value must be positive integer.",
        ),
        (
            {"max-concurrent-file-group-rewrites": 0},
            "Cannot set max-concurrent-file-group-rewrites to 0, the value must be positive.",
        ),
        (
            {"partial-progress.enabled": True, "partial-progress.max-commits": 0},
            "Cannot set partial-progress.max-commits to 0, the value must be positive when "
            "partial-progress.enabled is true",
        ),
        (
            {"partial-progress.max-failed-commits": -1},
            "Cannot set partial-progress.max-failed-commits to -1, the value must be >= 0",
        ),
        ({"min-input-files": "abc"}, "option 'min-input-files'='abc' is not an integer"),
        ({"min-input-files": " 5"}, "option 'min-input-files'=' 5' is not an integer"),
        ({"min-input-files": "2.0"}, "option 'min-input-files'='2.0' is not an integer"),
        ({"min-input-files": True}, "option 'min-input-files'=True must be an integer, got bool"),
        ({"min-input-files": 2**31}, "is out of the range of an integer"),
        ({"max-file-group-size-bytes": "9223372036854775808"}, "out of the range of a long"),
        ({"rewrite-all": "yes"}, "option 'rewrite-all'='yes' must be true or false"),
        ({"rewrite-all": 1}, "option 'rewrite-all'=1 must be true or false"),
        ({"delete-ratio-threshold": "NaN"}, "'delete-ratio-threshold'='NaN' is not a number"),
        ({"delete-ratio-threshold": "1e999"}, "must be a finite number"),
        ({"rewrite-job-order": 1}, "option 'rewrite-job-order'=1 must be a string, got int"),
    ],
)
def test_data_validation_messages(given_options: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        options(given_options)


def test_the_last_value_check_passes_when_partial_progress_is_off() -> None:
    assert options({"partial-progress.max-commits": 0}).partial_progress_max_commits == 0


@pytest.mark.parametrize(
    ("given_options", "message"),
    [
        ({"compression-factor": 0}, "'compression-factor' is set to 0.0 but must be > 0"),
        (
            {"shuffle-partitions-per-file": 0},
            "'shuffle-partitions-per-file' is set to 0 but must be > 0",
        ),
    ],
)
def test_sort_validation_messages(given_options: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        RewriteDataFilesOptions.parse(given_options, "sort")


def test_target_from_a_bad_table_property_names_it() -> None:
    with pytest.raises(
        InvalidValueError, match=r"table property write.target-file-size-bytes='big'"
    ):
        RewriteDataFilesOptions.parse(None, "binpack", {"write.target-file-size-bytes": "big"})
    with pytest.raises(
        InvalidValueError, match=r"from the table property write.target-file-size-bytes"
    ):
        RewriteDataFilesOptions.parse(None, "binpack", {"write.target-file-size-bytes": "0"})
    with pytest.raises(InvalidValueError, match=r"write.delete.target-file-size-bytes='-3'"):
        RewritePositionDeleteFilesOptions.parse(None, {"write.delete.target-file-size-bytes": "-3"})


JAVA_BINPACK_OPTIONS = {
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "rewrite-all",
    "max-file-group-size-bytes",
    "delete-file-threshold",
    "delete-ratio-threshold",
    "rewrite-job-order",
    "max-files-to-rewrite",
    "max-concurrent-file-group-rewrites",
    "partial-progress.enabled",
    "partial-progress.max-commits",
    "partial-progress.max-failed-commits",
    "use-starting-sequence-number",
    "output-spec-id",
    "remove-dangling-deletes",
}


def test_known_options_are_javas() -> None:
    assert RewriteDataFilesOptions.known_options("binpack") == JAVA_BINPACK_OPTIONS
    assert RewriteDataFilesOptions.known_options("sort") == JAVA_BINPACK_OPTIONS | {
        "compression-factor",
        "shuffle-partitions-per-file",
    }
    assert RewritePositionDeleteFilesOptions.known_options() == {
        "target-file-size-bytes",
        "min-file-size-bytes",
        "max-file-size-bytes",
        "min-input-files",
        "rewrite-all",
        "max-file-group-size-bytes",
        "rewrite-job-order",
        "max-concurrent-file-group-rewrites",
        "partial-progress.enabled",
        "partial-progress.max-commits",
    }


@pytest.mark.parametrize(
    ("parse", "name"),
    [
        (lambda o: RewriteDataFilesOptions.parse(o), "compression-factor"),
        (lambda o: RewriteDataFilesOptions.parse(o), "shuffle-partitions-per-file"),
        (lambda o: RewriteDataFilesOptions.parse(o, "sort"), "min-input-file"),
        (lambda o: RewritePositionDeleteFilesOptions.parse(o), "delete-file-threshold"),
        (lambda o: RewritePositionDeleteFilesOptions.parse(o), "output-spec-id"),
        (
            lambda o: RewritePositionDeleteFilesOptions.parse(o),
            "partial-progress.max-failed-commits",
        ),
        (lambda o: RewritePositionDeleteFilesOptions.parse(o), "use-starting-sequence-number"),
    ],
)
def test_unknown_options_are_refused_naming_them_and_the_known_ones(parse: Any, name: str) -> None:
    with pytest.raises(ValidationError) as raised:
        parse({name: "1", "min-input-files": "2"})
    message = str(raised.value)
    assert f"Cannot use options ['{name}']" in message
    assert "known options: " in message and "max-file-group-size-bytes" in message


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(InvalidValueError, match="unknown rewrite strategy 'zorder'"):
        RewriteDataFilesOptions.parse(None, "zorder")  # type: ignore[arg-type]


# --- sizes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("input_size", "expected"),
    [
        (50, 1),  # below the target
        (100, 1),
        (180, 2),  # remainder 80 > min 75: its own file
        (210, 2),  # remainder 10 spread: 105 a file, within 10% of the target
        (250, 3),  # remainder 50 spread would make 125 a file: kept as a file
        (1000, 10),
    ],
)
def test_expected_output_files(input_size: int, expected: int) -> None:
    assert options().expected_output_files(input_size) == expected


def test_split_size_and_writer_size() -> None:
    o = options({"target-file-size-bytes": 10_000})  # min 7500, max 18000
    assert o.write_max_file_size == 14_000
    assert o.input_split_size(21_000) == 14_000  # 10500 + 5 KiB, capped at the writer's size
    assert o.input_split_size(5_000) == 5_000 + 5 * 1024
    assert o.input_split_size(1_000) == 10_000  # at least the target


def test_sort_scales_expected_files_by_compression_factor() -> None:
    props = {"write.target-file-size-bytes": "10000"}
    o = RewriteDataFilesOptions.parse({"compression-factor": 2}, "sort", props)
    assert o.expected_output_files(10_000) == 2
    assert o.input_split_size(10_000) == 5_000 + 5 * 1024  # half the input a split
    o = RewriteDataFilesOptions.parse({"compression-factor": "0.001"}, "sort", props)
    assert o.expected_output_files(10) == 1


# --- bin packing -----------------------------------------------------------------------------


def test_pack_next_fit_with_lookback_one() -> None:
    assert pack([5, 5, 5], int, 10) == [[5, 5], [5]]
    assert pack([6, 5, 4], int, 10) == [[6], [5, 4]]
    assert pack([15, 1], int, 10) == [[15], [1]]  # a heavy item alone
    assert pack([], int, 10) == []


def test_pack_lookback_and_largest_bin_first() -> None:
    assert pack([6, 5, 4], int, 10, lookback=2) == [[6, 4], [5]]
    assert pack([3, 9, 2], int, 10, lookback=1, largest_bin_first=True) == [[9], [3, 2]]
    # The first of equally heavy bins is closed.
    assert pack([5, 5, 6, 6], int, 10, lookback=2, largest_bin_first=True) == [[5, 5], [6], [6]]
    with pytest.raises(ValidationError, match="look-back"):
        pack([1], int, 10, lookback=0)


@given(
    st.lists(st.integers(0, 50), max_size=40),
    st.integers(1, 60),
    st.integers(1, 4),
    st.booleans(),
)
def test_pack_properties(weights: list[int], target: int, lookback: int, largest: bool) -> None:
    items = list(enumerate(weights))
    bins = pack(items, lambda item: item[1], target, lookback, largest)
    assert sorted(i for b in bins for i in b) == items
    for b in bins:
        assert b
        assert [i for i, _ in b] == sorted(i for i, _ in b)  # order kept within a bin
        assert len(b) == 1 or sum(w for _, w in b) <= target


# --- selecting files ------------------------------------------------------------------------


def test_too_small_files_are_grouped_when_enough() -> None:
    five = [task(10) for _ in range(5)]
    assert paths(plan(five)) == [file_paths(five)]
    four = [task(10) for _ in range(4)]
    assert plan(four).groups == ()  # fewer than min-input-files, and less than the target
    assert paths(plan(four, {"min-input-files": 2})) == [file_paths(four)]


def test_well_sized_files_are_left_alone() -> None:
    good = [task(100) for _ in range(6)]
    assert plan(good).groups == ()
    small = [task(10) for _ in range(5)]
    assert paths(plan(good + small)) == [file_paths(small)]


def test_two_small_files_above_the_target_are_enough_content() -> None:
    two = [task(70), task(70)]
    assert paths(plan(two)) == [file_paths(two)]


def test_one_too_large_file_is_rewritten_alone_and_one_small_file_is_not() -> None:
    large = task(200)
    assert paths(plan([large])) == [[large.file.file_path]]
    assert plan([task(10)], {"min-input-files": 1}).groups == ()


def test_delete_file_threshold() -> None:
    with_deletes = task(100, deletes=2)
    others = [task(100, deletes=1)]
    assert plan([with_deletes, *others]).groups == ()
    assert paths(plan([with_deletes, *others], {"delete-file-threshold": 2})) == [
        [with_deletes.file.file_path]
    ]
    # 0: every file, deletes or not (0 >= 0), and every group.
    everything = [task(100), task(100, "b")]
    assert len(plan(everything, {"delete-file-threshold": 0}).groups) == 2


def test_delete_ratio_counts_file_scoped_deletes_only() -> None:
    path = "/t/data/ratio.parquet"

    def with_deletes(*deletes: FakeDelete, records: int = 10) -> FakeTask:
        return FakeTask(FakeFile(path, 100, record_count=records), deletes)

    referenced = FakeDelete("/d1", record_count=3, referenced_data_file=path)
    bounded = FakeDelete(
        "/d2", record_count=3, lower_bounds={FILE_PATH_ID: b"x"}, upper_bounds={FILE_PATH_ID: b"x"}
    )
    partition_scoped = FakeDelete(
        "/d3", record_count=9, lower_bounds={FILE_PATH_ID: b"a"}, upper_bounds={FILE_PATH_ID: b"z"}
    )
    equality = FakeDelete("/d4", content=2, record_count=9, referenced_data_file=path)
    assert [is_file_scoped(d) for d in (referenced, bounded, partition_scoped, equality)] == [
        True,
        True,
        False,
        False,
    ]
    assert len(plan([with_deletes(referenced)]).groups) == 1  # 3 of 10 >= 0.3
    assert len(plan([with_deletes(bounded)]).groups) == 1
    assert plan([with_deletes(partition_scoped, equality)]).groups == ()
    assert plan([with_deletes(referenced)], {"delete-ratio-threshold": "0.31"}).groups == ()
    # More deleted than rows: min(deleted, rows); no rows: no ratio.
    assert len(plan([with_deletes(referenced, records=2)]).groups) == 1
    assert plan([with_deletes(referenced, records=0)]).groups == ()


def test_rewrite_all_takes_every_file_and_group() -> None:
    files = [task(100), task(100), task(100, "b")]
    p = plan(files, {"rewrite-all": True})
    assert paths(p) == [file_paths(files[:2]), file_paths(files[2:])]


def test_max_file_group_size_splits_a_partition() -> None:
    files = [task(10) for _ in range(10)]
    p = plan(files, {"max-file-group-size-bytes": 30, "min-input-files": 2})
    assert paths(p) == [file_paths(files[i : i + 3]) for i in (0, 3, 6)]  # the last 1 is dropped
    assert p.total_group_count == 3
    assert [g.info.partition_index for g in p.groups] == [1, 2, 3]
    assert all(g.input_bytes <= 30 for g in p.groups)


# --- partitions and specs --------------------------------------------------------------------


def test_groups_per_partition_with_indexes() -> None:
    a = [task(10, "a") for _ in range(5)]
    b = [task(10, "b") for _ in range(5)]
    c = [task(100, "c")]
    p = plan([b[0], a[0], *a[1:], *b[1:], *c])
    assert paths(p) == [file_paths(b), file_paths(a)]  # partitions in order of appearance
    assert [(g.info.global_index, g.info.partition_index) for g in p.groups] == [(1, 1), (2, 1)]
    assert [dict(g.info.partition) for g in p.groups] == [{"cat": "b"}, {"cat": "a"}]
    assert (p.groups_in_partition({"cat": "a"}), p.groups_in_partition({"cat": "c"})) == (1, 0)
    assert p.total_group_count == 2
    with pytest.raises(ValidationError, match="no partition"):
        p.groups_in_partition({"cat": "z"})


def test_files_of_another_spec_share_the_all_null_partition() -> None:
    old = [task(10, spec_id=2) for _ in range(3)]
    null = [task(10, None) for _ in range(2)]
    other = [task(10, "a") for _ in range(5)]
    p = plan([*old, *other, *null])
    assert paths(p) == [file_paths(old + null), file_paths(other)]
    assert dict(p.groups[0].info.partition) == {"cat": None}
    assert p.groups[0].partition_spec_id == 0


def test_output_spec_changes_the_output_not_the_grouping() -> None:
    files = [task(10, "a") for _ in range(5)]
    p = plan(files, {"output-spec-id": 2})
    assert [(g.output_spec_id, dict(g.info.partition)) for g in p.groups] == [(2, {"cat": "a"})]
    assert p.groups[0].requires_repartition
    assert not plan(files).groups[0].requires_repartition
    with pytest.raises(InvalidValueError, match=r"Cannot use output spec id 7 because the table"):
        plan(files, {"output-spec-id": 7})


def test_an_unpartitioned_current_spec_groups_everything() -> None:
    files = [task(10, spec_id=2) for _ in range(3)] + [task(10, "a") for _ in range(2)]
    p = plan(files, current=2)
    assert paths(p) == [file_paths(files)]
    assert dict(p.groups[0].info.partition) == {}


def test_a_file_in_two_tasks_is_refused() -> None:
    t = task(10)
    with pytest.raises(ValidationError, match="in two scan tasks"):
        plan([t, t])


# --- max-files-to-rewrite, job order ------------------------------------------------------


def test_max_files_to_rewrite_cuts_groups_in_planning_order() -> None:
    a = [task(30, "a") for _ in range(6)]
    b = [task(10, "b") for _ in range(5)]
    c = [task(10, "c") for _ in range(5)]
    p = plan(a + b + c, {"max-files-to-rewrite": 8})
    assert paths(p) == [file_paths(a), file_paths(b[:2])]
    assert [g.info.global_index for g in p.groups] == [1, 2]
    # The cut group keeps the sizes planned for all its files, and its own bytes.
    assert p.groups[1].input_bytes == 20
    assert p.groups[0].expected_output_files == 2
    assert p.total_group_count == 3  # counted before the cut, as Java counts
    assert p.groups_in_partition({"cat": "c"}) == 1


def test_the_cut_group_is_sized_by_all_its_files() -> None:
    files = [task(60, "a") for _ in range(5)]  # 300 bytes: 3 files expected
    p = plan(files, {"max-files-to-rewrite": 1})
    (group,) = p.groups
    assert (group.input_file_count, group.input_bytes, group.expected_output_files) == (1, 60, 3)


@pytest.mark.parametrize(
    ("order", "key", "reverse"),
    [
        ("bytes-asc", "input_bytes", False),
        ("bytes-desc", "input_bytes", True),
        ("files-asc", "input_file_count", False),
        ("files-desc", "input_file_count", True),
    ],
)
def test_job_order(order: str, key: str, reverse: bool) -> None:
    files = (
        [task(10, "a") for _ in range(6)]
        + [task(40, "b") for _ in range(5)]
        + [task(10, "c") for _ in range(5)]
        + [task(70, "d") for _ in range(2)]
    )
    planned = plan(files, {"rewrite-all": True})
    ordered = plan(files, {"rewrite-all": True, "rewrite-job-order": order})
    expected = sorted(planned.groups, key=lambda g: getattr(g, key), reverse=reverse)
    assert [g.info for g in ordered.groups] == [g.info for g in expected]
    assert [g.info.global_index for g in planned.groups] == [1, 2, 3, 4]


def test_group_fields() -> None:
    shared = FakeDelete("/shared-eq", content=2)
    dv = FakeDelete("/dv.puffin", file_format="PUFFIN", content_offset=4, content_size_in_bytes=40)
    t1 = FakeTask(FakeFile("/a1", 10, record_count=3), (shared, dv))
    t2 = FakeTask(FakeFile("/a2", 20, record_count=4), (shared,))
    (group,) = plan([t1, t2], {"rewrite-all": True}).groups
    assert (group.input_file_count, group.input_bytes, group.record_count) == (2, 30, 7)
    assert (group.delete_files_count, group.dangling_dvs) == (2, (dv,))
    # 30 bytes + 5 KiB of split overhead, capped at the writer's 140.
    assert (group.max_output_file_size, group.input_split_size, group.expected_output_files) == (
        140,
        140,
        1,
    )
    assert group.data_files == (t1.file, t2.file)


# --- properties of the data planner ----------------------------------------------------------

sizes = st.integers(0, 250)
partitions = st.sampled_from(["a", "b", None])


@st.composite
def fake_tasks(draw: st.DrawFn) -> list[FakeTask]:
    specs = st.sampled_from([0, 0, 0, 2])
    out = []
    for size, cat, deletes, spec_id in draw(
        st.lists(st.tuples(sizes, partitions, st.integers(0, 3), specs), max_size=40)
    ):
        out.append(task(size, cat, deletes=deletes, spec_id=spec_id))
    return out


plan_options = st.fixed_dictionaries(
    {},
    optional={
        "min-input-files": st.integers(1, 6),
        "rewrite-all": st.booleans(),
        "max-file-group-size-bytes": st.integers(1, 600),
        "delete-file-threshold": st.integers(0, 4),
        "rewrite-job-order": st.sampled_from(
            ["none", "bytes-asc", "bytes-desc", "files-asc", "files-desc"]
        ),
        "max-files-to-rewrite": st.integers(1, 30),
    },
)


@given(fake_tasks(), plan_options)
def test_data_plan_properties(tasks: list[FakeTask], given_options: dict[str, object]) -> None:
    o = options(given_options)
    p = plan_data_file_groups(tasks, o, specs=SPECS, current_spec_id=0)
    by_path = {t.file.file_path: t for t in tasks}
    planned = [path for g in p.groups for path in g.file_paths]
    assert len(planned) == len(set(planned))  # every file in at most one group
    if o.max_files_to_rewrite is not None:
        assert len(planned) <= o.max_files_to_rewrite
    elif o.rewrite_all:
        assert sorted(planned) == sorted(by_path)
    for g in p.groups:
        assert g.input_file_count > 0
        assert g.input_bytes == sum(by_path[x].file.file_size_in_bytes for x in g.file_paths)
        assert g.input_file_count == 1 or g.input_bytes <= o.max_file_group_size_bytes
        keys = {
            None if by_path[x].file.spec_id != 0 else by_path[x].file.partition["cat"]
            for x in g.file_paths
        }
        assert keys == {g.info.partition["cat"]}
        if not o.rewrite_all:
            small_or_large = [
                by_path[x].file.file_size_in_bytes < 75 or by_path[x].file.file_size_in_bytes > 180
                for x in g.file_paths
            ]
            deleted = [
                len(by_path[x].delete_files) >= o.delete_file_threshold for x in g.file_paths
            ]
            assert all(a or b for a, b in zip(small_or_large, deleted, strict=True))
    order = o.rewrite_job_order
    if order != "none":
        key = [g.input_bytes if order.startswith("bytes") else g.input_file_count for g in p.groups]
        assert key == sorted(key, reverse=order.endswith("desc"))
    infos = sorted(g.info.global_index for g in p.groups)
    assert infos == list(range(1, len(p.groups) + 1))
    assert p.total_group_count >= len(p.groups)


# --- commit batches --------------------------------------------------------------------------


def test_without_partial_progress_one_commit() -> None:
    files = [task(10, c) for c in "abc" for _ in range(5)]
    p = plan(files)
    assert commit_batches(p, options()) == (p.groups,)
    assert commit_batches(plan([]), options()) == ()


def test_partial_progress_batches_of_ceil_groups_over_max_commits() -> None:
    files = [task(10, str(c)) for c in range(10) for _ in range(5)]
    o = options({"partial-progress.enabled": True, "partial-progress.max-commits": 3})
    p = plan_data_file_groups(files, o, specs=SPECS, current_spec_id=0)
    assert [len(b) for b in commit_batches(p, o)] == [4, 4, 2]
    o = options({"partial-progress.enabled": True, "partial-progress.max-commits": 6})
    assert [len(b) for b in commit_batches(p, o)] == [2, 2, 2, 2, 2]


def test_partial_progress_batches_divide_javas_total_group_count() -> None:
    files = [task(10, str(c)) for c in range(10) for _ in range(5)]
    o = options(
        {
            "partial-progress.enabled": True,
            "partial-progress.max-commits": 5,
            "max-files-to-rewrite": 20,
        }
    )
    p = plan_data_file_groups(files, o, specs=SPECS, current_spec_id=0)
    assert (len(p.groups), p.total_group_count) == (4, 10)
    assert [len(b) for b in commit_batches(p, o)] == [2, 2]


@given(st.integers(0, 30), st.integers(1, 12), st.booleans())
def test_batches_cover_every_group_once(groups: int, max_commits: int, enabled: bool) -> None:
    files = [task(10, str(c)) for c in range(groups) for _ in range(5)]
    o = options({"partial-progress.enabled": enabled, "partial-progress.max-commits": max_commits})
    p = plan_data_file_groups(files, o, specs=SPECS, current_spec_id=0)
    batches = commit_batches(p, o)
    assert [g for b in batches for g in b] == list(p.groups)
    assert all(batches)
    assert len(batches) <= (max_commits if enabled else 1)


def test_check_failed_commits() -> None:
    o = options({"partial-progress.enabled": True, "partial-progress.max-failed-commits": 1})
    check_failed_commits(1, o)
    with pytest.raises(
        CommitFailedError, match=r"2 rewrite commits failed.*maximum allowed failures of 1"
    ):
        check_failed_commits(2, o)
    with pytest.raises(ValidationError, match=r"only with partial-progress\.enabled"):
        check_failed_commits(0, options())


# --- results -------------------------------------------------------------------------------


def test_results_sum_javas_counts() -> None:
    dv = FakeDelete("/dv.puffin", file_format="PUFFIN", content_offset=4, content_size_in_bytes=40)
    files = [FakeTask(FakeFile(f"/f{i}", 10 + i), (dv,) if i == 0 else ()) for i in range(5)]
    other = [task(10, "b") for _ in range(5)]
    g1, g2 = plan(files + other).groups
    result = RewriteDataFilesResult(
        rewrite_results=(FileGroupRewriteResult.of(g1, 1),),
        rewrite_failures=(FileGroupFailureResult.of(g2),),
        removed_dangling_delete_files_count=2,
    )
    assert result.added_data_files_count == 1
    assert (result.rewritten_data_files_count, result.rewritten_bytes_count) == (5, 60)
    assert (result.failed_data_files_count, result.removed_delete_files_count) == (5, 3)
    assert RewriteDataFilesResult().rewritten_bytes_count == 0


# --- position deletes ----------------------------------------------------------------------


@dataclass(frozen=True)
class FakePositionDelete:
    file_path: str
    file_size_in_bytes: int
    partition: dict[str, Any] = field(default_factory=lambda: {"cat": "a"})
    spec_id: int = 0
    file_format: str = "PARQUET"
    content: int = 1
    record_count: int = 10
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    data_sequence_number: int | None = 1


@dataclass(frozen=True)
class FakeData:
    file_path: str
    spec_id: int
    partition: dict[str, Any]


def delete(size: int, cat: str | None = "a", **kwargs: Any) -> FakePositionDelete:
    spec_id = kwargs.pop("spec_id", 0)
    partition = kwargs.pop("partition", {"cat": cat} if spec_id == 0 else {})
    return FakePositionDelete(
        f"/t/data/{next(_names)}-deletes.parquet", size, partition, spec_id, **kwargs
    )


def delete_options(
    given_options: dict[str, object] | None = None,
) -> RewritePositionDeleteFilesOptions:
    return RewritePositionDeleteFilesOptions.parse(
        given_options, {"write.delete.target-file-size-bytes": "100"}
    )


def delete_plan(
    files: list[FakePositionDelete],
    given_options: dict[str, object] | None = None,
    data: list[FakeData] | None = None,
) -> RewritePlan[Any]:
    return plan_position_delete_groups(
        files, data or [], delete_options(given_options), specs=SPECS, schema=SCHEMA
    )


def delete_paths(p: RewritePlan[Any]) -> list[list[str]]:
    return [[f.file_path for f in g.files] for g in p.groups]


def test_position_deletes_selected_by_size_and_grouped() -> None:
    small = [delete(10) for _ in range(5)]
    good = [delete(100) for _ in range(3)]
    large = delete(200, "b")
    p = delete_plan([*small, *good, large])
    assert delete_paths(p) == [[f.file_path for f in small], [large.file_path]]
    assert delete_plan(small[:4]).groups == ()
    assert delete_paths(delete_plan(small[:4], {"min-input-files": 2})) == [
        [f.file_path for f in small[:4]]
    ]
    assert len(delete_plan([*small, *good], {"rewrite-all": True}).groups) == 1
    # Two small files above the target are enough content.
    assert len(delete_plan([delete(70), delete(70)]).groups) == 1


def test_position_delete_group_fields() -> None:
    dv = delete(
        5000,
        file_format="PUFFIN",
        content_offset=4,
        content_size_in_bytes=30,
        data_sequence_number=7,
    )
    files = [delete(10, data_sequence_number=3), dv, delete(10, data_sequence_number=5)]
    (group,) = delete_plan(files, {"rewrite-all": True}).groups
    assert (group.input_bytes, group.record_count, group.input_file_count) == (50, 30, 3)
    assert group.max_rewritten_data_sequence_number == 7
    assert (group.max_output_file_size, group.input_split_size, group.expected_output_files) == (
        140,
        140,
        1,
    )
    result = RewritePositionDeleteFilesResult((PositionDeletesGroupRewriteResult.of(group, 1, 42),))
    assert (result.rewritten_delete_files_count, result.added_delete_files_count) == (3, 1)
    assert (result.rewritten_bytes_count, result.added_bytes_count) == (50, 42)


def test_position_deletes_of_several_specs_share_the_table_partition() -> None:
    old = delete(10, "a")  # spec 0: (cat)
    new = delete(10, spec_id=1, partition={"cat": "a", "id_bucket": None})
    bucketed = delete(10, spec_id=1, partition={"cat": "a", "id_bucket": 2})
    p = delete_plan([old, new, bucketed], {"rewrite-all": True})
    assert delete_paths(p) == [[old.file_path, new.file_path], [bucketed.file_path]]
    assert [dict(g.info.partition) for g in p.groups] == [
        {"cat": "a", "id_bucket": None},
        {"cat": "a", "id_bucket": 2},
    ]
    assert p.groups_in_partition({"cat": "a", "id_bucket": 2}) == 1


def test_live_data_paths_follow_the_runners_partition_rule() -> None:
    data = [
        FakeData("/a1", 0, {"cat": "a"}),
        FakeData("/a2", 1, {"cat": "a", "id_bucket": 1}),
        FakeData("/b1", 0, {"cat": "b"}),
        FakeData("/u1", 2, {}),
    ]
    by_spec0 = delete(10, "a")
    by_spec1 = delete(10, spec_id=1, partition={"cat": "a", "id_bucket": 1})
    unpartitioned = delete(10, spec_id=2)
    p = delete_plan([by_spec0, by_spec1, unpartitioned], {"rewrite-all": True}, data)
    kept = [sorted(g.live_data_paths) for g in p.groups]
    # spec 0 selects on cat only; spec 1 on cat and the bucket; an unpartitioned delete file
    # keeps deletes of every file.
    assert kept == [["/a1", "/a2"], ["/a2"], ["/a1", "/a2", "/b1", "/u1"]]


def test_position_delete_inputs_are_checked() -> None:
    with pytest.raises(ValidationError, match="not a position delete file"):
        delete_plan([delete(10, content=2)])
    twice = delete(10)
    with pytest.raises(ValidationError, match="given twice"):
        delete_plan([twice, twice])
    with pytest.raises(ValidationError, match="no data sequence number"):
        delete_plan([delete(10, data_sequence_number=None)], {"rewrite-all": True})


@given(
    st.lists(st.tuples(st.integers(0, 250), st.sampled_from(["a", "b"])), max_size=30),
    plan_options.map(
        lambda o: {
            k: v for k, v in o.items() if k in RewritePositionDeleteFilesOptions.known_options()
        }
    ),
)
def test_position_delete_plan_properties(
    files: list[tuple[int, str]], given_options: dict[str, object]
) -> None:
    deletes = [delete(size, cat) for size, cat in files]
    o = delete_options(given_options)
    p = plan_position_delete_groups(deletes, [], o, specs=SPECS, schema=SCHEMA)
    planned = [f.file_path for g in p.groups for f in g.files]
    assert len(planned) == len(set(planned))
    if o.rewrite_all:
        assert sorted(planned) == sorted(f.file_path for f in deletes)
    for g in p.groups:
        assert g.input_file_count == 1 or g.input_bytes <= o.max_file_group_size_bytes
        assert {f.partition["cat"] for f in g.files} == {g.info.partition["cat"]}
    batches = commit_batches(p, o)
    assert [g for b in batches for g in b] == list(p.groups)


# --- a real table ----------------------------------------------------------------------------


def test_plan_of_a_real_table(tmp_path: Path) -> None:
    table = make_table(tmp_path, **{"write.target-file-size-bytes": "10000", "format-version": "3"})
    for i in range(3):
        table.append(
            pa.table({"id": pa.array([i, i + 10, i + 20], pa.int64()), "cat": ["a", "b", "c"]})
        )
    table = table.refresh()
    assert plan_rewrite_data_files(table).groups == ()  # 3 small files a partition, < 5
    p = plan_rewrite_data_files(table, {"min-input-files": 2})
    assert sorted(dict(g.info.partition)["cat"] for g in p.groups) == ["a", "b", "c"]
    assert all(g.input_file_count == 3 and g.record_count == 3 for g in p.groups)
    assert all(g.expected_output_files == 1 and g.max_output_file_size == 14000 for g in p.groups)
    filtered = plan_rewrite_data_files(table, {"min-input-files": 2}, row_filter="CAT = 'b'")
    assert [dict(g.info.partition) for g in filtered.groups] == [{"cat": "b"}]

    # Deletes of one row in 3 of two files of partition a: the ratio rule (>= 0.3) makes its
    # group worth rewriting.
    tasks = [t for t in table.scan(row_filter="cat = 'a'").plan_files()]
    deletes = [
        position_deletes(
            table, "a-deletes.parquet", [(tasks[0].file.file_path, 0)], partition={"cat": "a"}
        ),
        deletion_vector(table, "a-dv.puffin", tasks[1].file.file_path, [0], partition={"cat": "a"}),
    ]
    commit_deletes(table, deletes)
    table = table.refresh()
    (group,) = plan_rewrite_data_files(table).groups
    assert sorted(group.file_paths) == sorted(t.file.file_path for t in tasks)
    assert group.delete_files_count == 2 and len(group.dangling_dvs) == 1

    p = plan_rewrite_position_delete_files(table, {"min-input-files": 2})
    (delete_group,) = p.groups
    assert sorted(f.file_format for f in delete_group.files) == ["PARQUET", "PUFFIN"]
    assert delete_group.live_data_paths == {t.file.file_path for t in tasks}
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert delete_group.max_rewritten_data_sequence_number == snapshot.sequence_number
    assert (
        plan_rewrite_position_delete_files(
            table, {"min-input-files": 2}, row_filter="cat = 'b'"
        ).groups
        == ()
    )
    assert (
        len(
            plan_rewrite_position_delete_files(
                table, {"rewrite-all": True}, row_filter="cat = 'a'"
            ).groups
        )
        == 1
    )


def test_plan_of_an_empty_table_checks_options(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    assert plan_rewrite_data_files(table).groups == ()
    with pytest.raises(ValidationError, match="Cannot use options"):
        plan_rewrite_data_files(table, {"bogus": 1})
    with pytest.raises(InvalidValueError, match="output spec id 3"):
        plan_rewrite_data_files(table, {"output-spec-id": 3})
    assert plan_rewrite_position_delete_files(table).groups == ()


def test_a_v3_table_with_only_deletion_vectors_has_nothing_to_rewrite(tmp_path: Path) -> None:
    table = make_table(tmp_path, **{"format-version": "3"})
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "cat": ["a", "a"]}))
    table = table.refresh()
    (data,) = [t.file.file_path for t in table.scan().plan_files()]
    commit_deletes(table, [deletion_vector(table, "dv.puffin", data, [0], partition={"cat": "a"})])
    table = table.refresh()
    assert plan_rewrite_position_delete_files(table, {"rewrite-all": True}).groups == ()
