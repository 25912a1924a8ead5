"""The options of ``rewrite_data_files`` and ``rewrite_position_delete_files`` as Apache
Iceberg Java 1.10.2 reads them: Spark's ``RewriteDataFilesSparkAction`` and
``RewritePositionDeleteFilesSparkAction`` (the action's own options), the planners
``SizeBasedFileRewritePlanner``, ``BinPackRewriteFilePlanner``, Spark's
``SparkShufflingDataRewritePlanner`` and ``BinPackRewritePositionDeletePlanner``, and the
sort runner (``SparkShufflingFileRewriteRunner``).

An option none of them knows is refused, naming it and listing the known ones (Java:
"Cannot use options [...], they are not supported by the action or the rewriter"). Values are
Java's strings or Python values (``bool`` for booleans, ``int`` for integers, ``int`` or
``float`` for ratios); ``None`` means not set, as a null value does in Java's option map.
Where Java would parse silently (``Boolean.parseBoolean`` turns any word but ``true`` into
false), frazil refuses what it cannot read."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from frazil.errors import InvalidValueError, ValidationError

__all__ = [
    "JobOrder",
    "RewriteDataFilesOptions",
    "RewritePositionDeleteFilesOptions",
    "Strategy",
]

Strategy = Literal["binpack", "sort"]
JobOrder = Literal["none", "bytes-asc", "bytes-desc", "files-asc", "files-desc"]

# --- names (Java's constants) ----------------------------------------------------------------

TARGET_FILE_SIZE_BYTES = "target-file-size-bytes"
MIN_FILE_SIZE_BYTES = "min-file-size-bytes"
MAX_FILE_SIZE_BYTES = "max-file-size-bytes"
MIN_INPUT_FILES = "min-input-files"
REWRITE_ALL = "rewrite-all"
MAX_FILE_GROUP_SIZE_BYTES = "max-file-group-size-bytes"
DELETE_FILE_THRESHOLD = "delete-file-threshold"
DELETE_RATIO_THRESHOLD = "delete-ratio-threshold"
REWRITE_JOB_ORDER = "rewrite-job-order"
MAX_FILES_TO_REWRITE = "max-files-to-rewrite"
OUTPUT_SPEC_ID = "output-spec-id"
COMPRESSION_FACTOR = "compression-factor"
SHUFFLE_PARTITIONS_PER_FILE = "shuffle-partitions-per-file"
PARTIAL_PROGRESS_ENABLED = "partial-progress.enabled"
PARTIAL_PROGRESS_MAX_COMMITS = "partial-progress.max-commits"
PARTIAL_PROGRESS_MAX_FAILED_COMMITS = "partial-progress.max-failed-commits"
MAX_CONCURRENT_FILE_GROUP_REWRITES = "max-concurrent-file-group-rewrites"
USE_STARTING_SEQUENCE_NUMBER = "use-starting-sequence-number"
REMOVE_DANGLING_DELETES = "remove-dangling-deletes"

# Table properties that give the default target file size (TableProperties).
WRITE_TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"
WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT = 512 * 1024 * 1024
DELETE_TARGET_FILE_SIZE_BYTES = "write.delete.target-file-size-bytes"
DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT = 64 * 1024 * 1024

# --- defaults ------------------------------------------------------------------------------

MIN_FILE_SIZE_DEFAULT_RATIO = 0.75
MAX_FILE_SIZE_DEFAULT_RATIO = 1.80
MIN_INPUT_FILES_DEFAULT = 5
REWRITE_ALL_DEFAULT = False
MAX_FILE_GROUP_SIZE_BYTES_DEFAULT = 100 * 1024 * 1024 * 1024
DELETE_FILE_THRESHOLD_DEFAULT = 2**31 - 1  # Integer.MAX_VALUE: off
DELETE_RATIO_THRESHOLD_DEFAULT = 0.3
REWRITE_JOB_ORDER_DEFAULT: JobOrder = "none"
COMPRESSION_FACTOR_DEFAULT = 1.0
SHUFFLE_PARTITIONS_PER_FILE_DEFAULT = 1
PARTIAL_PROGRESS_ENABLED_DEFAULT = False
PARTIAL_PROGRESS_MAX_COMMITS_DEFAULT = 10
MAX_CONCURRENT_FILE_GROUP_REWRITES_DEFAULT = 5
USE_STARTING_SEQUENCE_NUMBER_DEFAULT = True
REMOVE_DANGLING_DELETES_DEFAULT = False

# SizeBasedFileRewritePlanner.SPLIT_OVERHEAD: added to each read split of a bin-pack rewrite.
SPLIT_OVERHEAD = 5 * 1024

_SIZE_PLANNER_OPTIONS = frozenset(
    {
        TARGET_FILE_SIZE_BYTES,
        MIN_FILE_SIZE_BYTES,
        MAX_FILE_SIZE_BYTES,
        MIN_INPUT_FILES,
        REWRITE_ALL,
        MAX_FILE_GROUP_SIZE_BYTES,
    }
)
_DATA_ACTION_OPTIONS = frozenset(
    {
        MAX_CONCURRENT_FILE_GROUP_REWRITES,
        MAX_FILE_GROUP_SIZE_BYTES,
        PARTIAL_PROGRESS_ENABLED,
        PARTIAL_PROGRESS_MAX_COMMITS,
        PARTIAL_PROGRESS_MAX_FAILED_COMMITS,
        TARGET_FILE_SIZE_BYTES,
        USE_STARTING_SEQUENCE_NUMBER,
        REWRITE_JOB_ORDER,
        OUTPUT_SPEC_ID,
        REMOVE_DANGLING_DELETES,
        MAX_FILES_TO_REWRITE,
    }
)
_BIN_PACK_PLANNER_OPTIONS = _SIZE_PLANNER_OPTIONS | {
    DELETE_FILE_THRESHOLD,
    DELETE_RATIO_THRESHOLD,
    REWRITE_JOB_ORDER,
    MAX_FILES_TO_REWRITE,
}
# The sort strategy plans with SparkShufflingDataRewritePlanner (compression-factor) and runs
# SparkShufflingFileRewriteRunner (shuffle-partitions-per-file); bin-pack's runner has none.
_DATA_OPTIONS: dict[str, frozenset[str]] = {
    "binpack": _DATA_ACTION_OPTIONS | _BIN_PACK_PLANNER_OPTIONS,
    "sort": _DATA_ACTION_OPTIONS
    | _BIN_PACK_PLANNER_OPTIONS
    | {COMPRESSION_FACTOR, SHUFFLE_PARTITIONS_PER_FILE},
}
_POSITION_DELETE_OPTIONS = _SIZE_PLANNER_OPTIONS | {
    MAX_CONCURRENT_FILE_GROUP_REWRITES,
    PARTIAL_PROGRESS_ENABLED,
    PARTIAL_PROGRESS_MAX_COMMITS,
    REWRITE_JOB_ORDER,
}

# RewriteJobOrder's names by their enum constant.
_JOB_ORDERS: dict[str, JobOrder] = {
    "BYTES_ASC": "bytes-asc",
    "BYTES_DESC": "bytes-desc",
    "FILES_ASC": "files-asc",
    "FILES_DESC": "files-desc",
    "NONE": "none",
}

_INT_BITS = 32
_LONG_BITS = 64
# Integer.parseInt / Long.parseLong: an optional sign and digits, nothing else (no spaces).
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
# Double.parseDouble's decimal form (it trims spaces; an f/F/d/D suffix is allowed).
_JAVA_DOUBLE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")


def _integer(value: object, bits: int, where: str) -> int:
    kind = "an integer" if bits == _INT_BITS else "a long integer"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidValueError(f"{where} must be {kind}, got {type(value).__name__}")
    if isinstance(value, str):
        if _JAVA_INTEGER.fullmatch(value) is None:
            raise InvalidValueError(f"{where} is not {kind}")
        number = int(value)
    else:
        number = value
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if not low <= number <= high:
        raise InvalidValueError(f"{where} is out of the range of {kind} ({low}..{high})")
    return number


def _double(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidValueError(f"{where} must be a number, got {type(value).__name__}")
    if isinstance(value, str):
        text = value.strip()
        if _JAVA_DOUBLE.fullmatch(text) is None:
            raise InvalidValueError(f"{where} is not a number")
        number = float(text.rstrip("fFdD"))
    else:
        number = float(value)
    if not math.isfinite(number):
        raise InvalidValueError(f"{where} must be a finite number")
    return number


def _boolean(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise InvalidValueError(f"{where} must be true or false")


def _job_order(value: object, where: str) -> JobOrder:
    # RewriteJobOrder.fromName: the first '-' becomes '_', then upper case, then the constant.
    if not isinstance(value, str):
        raise InvalidValueError(f"{where} must be a string, got {type(value).__name__}")
    order = _JOB_ORDERS.get(value.replace("-", "_", 1).upper())
    if order is None:
        raise InvalidValueError(
            f"Invalid rewrite job order name: {value} ({where}; one of "
            f"{', '.join(_JOB_ORDERS.values())})"
        )
    return order


class _Reader:
    """The given options of one action, read with Java's PropertyUtil rules."""

    def __init__(self, given: Mapping[str, object], action: str) -> None:
        self._given = given
        self._action = action

    def where(self, name: str) -> str:
        return f"{self._action} option {name!r}={self._given[name]!r}"

    def _get(self, name: str) -> object | None:
        return self._given.get(name)

    def has(self, name: str) -> bool:
        return self._get(name) is not None

    def integer(self, name: str, default: int) -> int:
        value = self._get(name)
        return default if value is None else _integer(value, _INT_BITS, self.where(name))

    def long(self, name: str, default: int) -> int:
        value = self._get(name)
        return default if value is None else _integer(value, _LONG_BITS, self.where(name))

    def nullable_integer(self, name: str) -> int | None:
        value = self._get(name)
        return None if value is None else _integer(value, _INT_BITS, self.where(name))

    def double(self, name: str, default: float) -> float:
        value = self._get(name)
        return default if value is None else _double(value, self.where(name))

    def boolean(self, name: str, default: bool) -> bool:
        value = self._get(name)
        return default if value is None else _boolean(value, self.where(name))

    def job_order(self, name: str) -> JobOrder:
        value = self._get(name)
        return REWRITE_JOB_ORDER_DEFAULT if value is None else _job_order(value, self.where(name))


def _given(options: Mapping[str, object] | None, known: frozenset[str], action: str) -> _Reader:
    given = dict(options or {})
    unknown = sorted(repr(k) for k in given if not isinstance(k, str) or k not in known)
    if unknown:
        raise ValidationError(
            f"Cannot use options [{', '.join(unknown)}], they are not supported by {action} "
            f"(known options: {', '.join(sorted(known))})"
        )
    return _Reader(given, action)


def _target_default(
    properties: Mapping[str, str] | None, key: str, default: int
) -> tuple[int, str | None]:
    """The default target file size from the table property ``key`` (Java's
    ``PropertyUtil.propertyAsLong(table.properties(), ...)``) and where it came from."""
    text = (properties or {}).get(key)
    if text is None:
        return default, None
    where = f"table property {key}={text!r}"
    return _integer(text, _LONG_BITS, where), where


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidValueError(message)


@dataclass(frozen=True)
class _SizeBasedOptions:
    """What ``SizeBasedFileRewritePlanner`` and the actions of both rewrites share.

    ``target_file_size_bytes`` defaults to the table's target file size property,
    ``min_file_size_bytes`` to 75% of the target, ``max_file_size_bytes`` to 180%; Java
    requires ``0 <= min < target < max``."""

    target_file_size_bytes: int
    min_file_size_bytes: int
    max_file_size_bytes: int
    min_input_files: int
    rewrite_all: bool
    max_file_group_size_bytes: int
    rewrite_job_order: JobOrder
    partial_progress_enabled: bool
    partial_progress_max_commits: int
    max_concurrent_file_group_rewrites: int

    def __post_init__(self) -> None:
        target, low, high = (
            self.target_file_size_bytes,
            self.min_file_size_bytes,
            self.max_file_size_bytes,
        )
        _check(target > 0, f"'{TARGET_FILE_SIZE_BYTES}' is set to {target} but must be > 0")
        _check(low >= 0, f"'{MIN_FILE_SIZE_BYTES}' is set to {low} but must be >= 0")
        _check(
            target > low,
            f"'{TARGET_FILE_SIZE_BYTES}' ({target}) must be > '{MIN_FILE_SIZE_BYTES}' ({low}), "
            "all new files will be smaller than the min threshold",
        )
        _check(
            target < high,
            f"'{TARGET_FILE_SIZE_BYTES}' ({target}) must be < '{MAX_FILE_SIZE_BYTES}' ({high}), "
            "all new files will be larger than the max threshold",
        )
        _check(
            self.min_input_files > 0,
            f"'{MIN_INPUT_FILES}' is set to {self.min_input_files} but must be > 0",
        )
        _check(
            self.max_file_group_size_bytes > 0,
            f"'{MAX_FILE_GROUP_SIZE_BYTES}' is set to {self.max_file_group_size_bytes} "
            "but must be > 0",
        )
        _check(
            self.rewrite_job_order in _JOB_ORDERS.values(),
            f"Invalid rewrite job order name: {self.rewrite_job_order}",
        )
        _check(
            self.max_concurrent_file_group_rewrites >= 1,
            f"Cannot set {MAX_CONCURRENT_FILE_GROUP_REWRITES} to "
            f"{self.max_concurrent_file_group_rewrites}, the value must be positive.",
        )
        _check(
            not self.partial_progress_enabled or self.partial_progress_max_commits > 0,
            f"Cannot set {PARTIAL_PROGRESS_MAX_COMMITS} to {self.partial_progress_max_commits}, "
            f"the value must be positive when {PARTIAL_PROGRESS_ENABLED} is true",
        )

    @staticmethod
    def _sizes(reader: _Reader, default_target: int, source: str | None) -> tuple[int, int, int]:
        target = reader.long(TARGET_FILE_SIZE_BYTES, default_target)
        if source is not None and not reader.has(TARGET_FILE_SIZE_BYTES) and target <= 0:
            # Java names the option; say where the value came from.
            raise InvalidValueError(
                f"'{TARGET_FILE_SIZE_BYTES}' is set to {target} (from the {source}) but must be > 0"
            )
        # (long) (target * ratio): a double product truncated toward zero.
        low = reader.long(MIN_FILE_SIZE_BYTES, int(target * MIN_FILE_SIZE_DEFAULT_RATIO))
        high = reader.long(MAX_FILE_SIZE_BYTES, int(target * MAX_FILE_SIZE_DEFAULT_RATIO))
        return target, low, high

    @property
    def write_max_file_size(self) -> int:
        """The target size the writer of a group rolls files at (Java's
        ``writeMaxFileSize``, a group's ``maxOutputFileSize``): the target plus half the way to
        the max, so that data a little larger than planned does not leave a tiny file."""
        target = self.target_file_size_bytes
        return int(target + (self.max_file_size_bytes - target) * 0.5)

    def _size_expected_output_files(self, input_size: int) -> int:
        # SizeBasedFileRewritePlanner.expectedOutputFiles: round the file count down when
        # spreading the remainder keeps files within 10% of the target (and the writer's size).
        target = self.target_file_size_bytes
        if input_size < target:
            return 1
        with_remainder = -(-input_size // target)
        without_remainder = input_size // target
        average_without = input_size // without_remainder
        if input_size % target > self.min_file_size_bytes:
            return with_remainder
        if float(average_without) < min(1.1 * target, float(self.write_max_file_size)):
            return without_remainder
        return with_remainder

    def expected_output_files(self, input_size: int) -> int:
        """How many files a group of ``input_size`` bytes should be rewritten into."""
        return self._size_expected_output_files(input_size)

    def input_split_size(self, input_size: int) -> int:
        """The read split size of a bin-pack rewrite of ``input_size`` bytes (Java's
        ``inputSplitSize``): the input over the expected file count, plus 5 KiB, at least the
        target and at most the writer's size."""
        estimated = input_size // self.expected_output_files(input_size) + SPLIT_OVERHEAD
        if estimated < self.target_file_size_bytes:
            return self.target_file_size_bytes
        return min(estimated, self.write_max_file_size)


@dataclass(frozen=True)
class RewriteDataFilesOptions(_SizeBasedOptions):
    """``rewrite_data_files`` options, checked; build with :meth:`parse`.

    ``max_files_to_rewrite`` None: no limit. ``output_spec_id`` None: the table's current
    spec (checked against the table's specs when planning). ``compression_factor`` and
    ``shuffle_partitions_per_file`` are the sort strategy's (None for bin-pack).
    ``partial_progress_max_failed_commits`` defaults to ``partial_progress_max_commits``."""

    strategy: Strategy
    delete_file_threshold: int
    delete_ratio_threshold: float
    max_files_to_rewrite: int | None
    output_spec_id: int | None
    compression_factor: float | None
    shuffle_partitions_per_file: int | None
    partial_progress_max_failed_commits: int
    use_starting_sequence_number: bool
    remove_dangling_deletes: bool

    ACTION: ClassVar[str] = "rewrite_data_files"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(
            self.strategy in _DATA_OPTIONS,
            f"unknown rewrite strategy {self.strategy!r} (one of {', '.join(_DATA_OPTIONS)})",
        )
        _check(
            self.delete_file_threshold >= 0,
            f"'{DELETE_FILE_THRESHOLD}' is set to {self.delete_file_threshold} but must be >= 0",
        )
        ratio = self.delete_ratio_threshold
        _check(ratio > 0, f"'{DELETE_RATIO_THRESHOLD}' is set to {ratio} but must be > 0")
        _check(ratio <= 1, f"'{DELETE_RATIO_THRESHOLD}' is set to {ratio} but must be <= 1")
        _check(
            self.max_files_to_rewrite is None or self.max_files_to_rewrite > 0,
            f"Cannot set {MAX_FILES_TO_REWRITE} to {self.max_files_to_rewrite}, the value must "
            "be positive integer.",
        )
        sort = self.strategy == "sort"
        for name, value in (
            (COMPRESSION_FACTOR, self.compression_factor),
            (SHUFFLE_PARTITIONS_PER_FILE, self.shuffle_partitions_per_file),
        ):
            _check(
                (value is not None) == sort,
                f"'{name}' is an option of the sort strategy only"
                if not sort
                else f"the sort strategy needs '{name}'",
            )
            _check(value is None or value > 0, f"'{name}' is set to {value} but must be > 0")
        # Java reads it unchecked; a negative value makes even a rewrite whose every commit
        # succeeded fail (0 failed commits > -1 allowed).
        _check(
            self.partial_progress_max_failed_commits >= 0,
            f"Cannot set {PARTIAL_PROGRESS_MAX_FAILED_COMMITS} to "
            f"{self.partial_progress_max_failed_commits}, the value must be >= 0",
        )

    @staticmethod
    def known_options(strategy: Strategy = "binpack") -> frozenset[str]:
        """Every option the action, the planner and the runner of ``strategy`` know."""
        known = _DATA_OPTIONS.get(strategy)
        if known is None:
            raise InvalidValueError(
                f"unknown rewrite strategy {strategy!r} (one of {', '.join(_DATA_OPTIONS)})"
            )
        return known

    @classmethod
    def parse(
        cls,
        options: Mapping[str, object] | None = None,
        strategy: Strategy = "binpack",
        table_properties: Mapping[str, str] | None = None,
    ) -> RewriteDataFilesOptions:
        """Reads ``options`` for ``strategy`` with Java's names and defaults; the default
        target file size is the table property ``write.target-file-size-bytes`` (512 MiB)."""
        reader = _given(options, cls.known_options(strategy), f"{cls.ACTION} ({strategy})")
        default, source = _target_default(
            table_properties, WRITE_TARGET_FILE_SIZE_BYTES, WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
        )
        target, low, high = cls._sizes(reader, default, source)
        sort = strategy == "sort"
        max_commits = reader.integer(
            PARTIAL_PROGRESS_MAX_COMMITS, PARTIAL_PROGRESS_MAX_COMMITS_DEFAULT
        )
        return cls(
            strategy=strategy,
            target_file_size_bytes=target,
            min_file_size_bytes=low,
            max_file_size_bytes=high,
            min_input_files=reader.integer(MIN_INPUT_FILES, MIN_INPUT_FILES_DEFAULT),
            rewrite_all=reader.boolean(REWRITE_ALL, REWRITE_ALL_DEFAULT),
            max_file_group_size_bytes=reader.long(
                MAX_FILE_GROUP_SIZE_BYTES, MAX_FILE_GROUP_SIZE_BYTES_DEFAULT
            ),
            output_spec_id=reader.nullable_integer(OUTPUT_SPEC_ID),
            delete_file_threshold=reader.integer(
                DELETE_FILE_THRESHOLD, DELETE_FILE_THRESHOLD_DEFAULT
            ),
            delete_ratio_threshold=reader.double(
                DELETE_RATIO_THRESHOLD, DELETE_RATIO_THRESHOLD_DEFAULT
            ),
            rewrite_job_order=reader.job_order(REWRITE_JOB_ORDER),
            max_files_to_rewrite=reader.nullable_integer(MAX_FILES_TO_REWRITE),
            compression_factor=(
                reader.double(COMPRESSION_FACTOR, COMPRESSION_FACTOR_DEFAULT) if sort else None
            ),
            shuffle_partitions_per_file=(
                reader.integer(SHUFFLE_PARTITIONS_PER_FILE, SHUFFLE_PARTITIONS_PER_FILE_DEFAULT)
                if sort
                else None
            ),
            max_concurrent_file_group_rewrites=reader.integer(
                MAX_CONCURRENT_FILE_GROUP_REWRITES, MAX_CONCURRENT_FILE_GROUP_REWRITES_DEFAULT
            ),
            partial_progress_max_commits=max_commits,
            partial_progress_max_failed_commits=reader.integer(
                PARTIAL_PROGRESS_MAX_FAILED_COMMITS, max_commits
            ),
            partial_progress_enabled=reader.boolean(
                PARTIAL_PROGRESS_ENABLED, PARTIAL_PROGRESS_ENABLED_DEFAULT
            ),
            use_starting_sequence_number=reader.boolean(
                USE_STARTING_SEQUENCE_NUMBER, USE_STARTING_SEQUENCE_NUMBER_DEFAULT
            ),
            remove_dangling_deletes=reader.boolean(
                REMOVE_DANGLING_DELETES, REMOVE_DANGLING_DELETES_DEFAULT
            ),
        )

    def expected_output_files(self, input_size: int) -> int:
        """How many files a group of ``input_size`` bytes should be rewritten into; the sort
        strategy first scales the size by ``compression-factor`` (Spark's
        ``SparkShufflingDataRewritePlanner``), which also changes :meth:`input_split_size`."""
        if self.compression_factor is None:
            return self._size_expected_output_files(input_size)
        return max(1, self._size_expected_output_files(int(input_size * self.compression_factor)))

    def shuffle_partitions(self, expected_output_files: int) -> int:
        """The sort runner's shuffle partition count for a group (``max(1, expected output
        files * shuffle-partitions-per-file)``)."""
        per_file = self.shuffle_partitions_per_file
        if per_file is None:
            raise ValidationError("shuffle partitions are the sort strategy's")
        return max(1, expected_output_files * per_file)


@dataclass(frozen=True)
class RewritePositionDeleteFilesOptions(_SizeBasedOptions):
    """``rewrite_position_delete_files`` options, checked; build with :meth:`parse`. Java's
    action has no ``partial-progress.max-failed-commits`` for it."""

    ACTION: ClassVar[str] = "rewrite_position_delete_files"

    @staticmethod
    def known_options() -> frozenset[str]:
        """Every option the action and ``BinPackRewritePositionDeletePlanner`` know."""
        return _POSITION_DELETE_OPTIONS

    @classmethod
    def parse(
        cls,
        options: Mapping[str, object] | None = None,
        table_properties: Mapping[str, str] | None = None,
    ) -> RewritePositionDeleteFilesOptions:
        """Reads ``options`` with Java's names and defaults; the default target file size is
        the table property ``write.delete.target-file-size-bytes`` (64 MiB)."""
        reader = _given(options, cls.known_options(), cls.ACTION)
        default, source = _target_default(
            table_properties,
            DELETE_TARGET_FILE_SIZE_BYTES,
            DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT,
        )
        target, low, high = cls._sizes(reader, default, source)
        return cls(
            target_file_size_bytes=target,
            min_file_size_bytes=low,
            max_file_size_bytes=high,
            min_input_files=reader.integer(MIN_INPUT_FILES, MIN_INPUT_FILES_DEFAULT),
            rewrite_all=reader.boolean(REWRITE_ALL, REWRITE_ALL_DEFAULT),
            max_file_group_size_bytes=reader.long(
                MAX_FILE_GROUP_SIZE_BYTES, MAX_FILE_GROUP_SIZE_BYTES_DEFAULT
            ),
            rewrite_job_order=reader.job_order(REWRITE_JOB_ORDER),
            max_concurrent_file_group_rewrites=reader.integer(
                MAX_CONCURRENT_FILE_GROUP_REWRITES, MAX_CONCURRENT_FILE_GROUP_REWRITES_DEFAULT
            ),
            partial_progress_max_commits=reader.integer(
                PARTIAL_PROGRESS_MAX_COMMITS, PARTIAL_PROGRESS_MAX_COMMITS_DEFAULT
            ),
            partial_progress_enabled=reader.boolean(
                PARTIAL_PROGRESS_ENABLED, PARTIAL_PROGRESS_ENABLED_DEFAULT
            ),
        )


def job_order_names() -> tuple[JobOrder, ...]:
    """The values of ``rewrite-job-order``."""
    return tuple(_JOB_ORDERS.values())
