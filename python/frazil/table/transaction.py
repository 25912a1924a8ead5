"""Transactions: changes collected against a table and committed once, retried on a lost race
(spec: "Optimistic Concurrency", "Commit Conflict Resolution and Retry").

A transaction holds :class:`PendingChange` objects in order, each staged when it is added
(its updates computed then, so errors show early; the first attempt reuses them while the
table is still at the metadata they were staged on). A retry starts from the table's refreshed
metadata: every change produces its updates anew against the metadata staged so far
(so an append re-applies on whatever the other writer committed, and a schema change checks
that the schema it was built on is still current), the requirements are derived from the base,
and the catalog swaps the pointer. A :class:`~frazil.errors.CommitFailedError` (another writer
won) refreshes the table and tries again, per the table's ``commit.retry.*`` properties with
Java's defaults and exponential backoff. A change that can no longer apply raises
:class:`~frazil.errors.CommitValidationError`, which is not retried. When the commit finally
fails, each change deletes what it wrote; when the catalog's answer is unknown
(:class:`~frazil.errors.CommitStateUnknownError`) nothing is deleted, since it may be live.
"""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from frazil.errors import (
    CommitFailedError,
    CommitStateUnknownError,
    CommitValidationError,
    FrazilError,
    InvalidValueError,
    NoSuchTableError,
    NotFoundError,
    ValidationError,
)
from frazil.metadata import TableMetadata
from frazil.table._apply import apply_updates
from frazil.table._properties import check_write_properties, int_property
from frazil.table.requirements import TableRequirement, requirements_for, validate_requirements
from frazil.table.updates import (
    RemoveProperties,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
)

if TYPE_CHECKING:
    from frazil.table._table import Table
    from frazil.table.manage_snapshots import ManageSnapshots
    from frazil.table.update_schema import UpdateSchema
    from frazil.table.update_sort_order import UpdateSortOrder
    from frazil.table.update_spec import UpdateSpec

__all__ = ["BuilderChange", "PendingChange", "RetryPolicy", "Transaction", "UpdateProperties"]


class PendingChange(ABC):
    """One operation of a transaction (a snapshot producer, a schema change, ...)."""

    @abstractmethod
    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        """The updates that apply this change on top of ``staged`` (the table's latest
        metadata with the transaction's earlier changes applied). Called when the change is
        added (its updates serve the first attempt while the table stays at that metadata) and
        again for each retry on refreshed metadata; raises CommitValidationError when the
        change can no longer apply."""

    def cleanup(self, committed: bool) -> None:  # noqa: B027 - optional hook
        """Called once when the transaction ends: ``committed`` says whether it landed. A
        change deletes the files it wrote and the commit does not reference (all of them when
        it failed)."""


class BuilderChange(PendingChange):
    """Fixed updates built against a base (an evolution builder's), valid while the
    ``requirements`` derived from that base still hold."""

    def __init__(
        self, updates: tuple[TableUpdate, ...], requirements: tuple[TableRequirement, ...]
    ) -> None:
        self.updates = updates
        self.requirements = requirements

    def updates_for(self, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        try:
            validate_requirements(self.requirements, staged)
        except CommitFailedError as error:
            raise CommitValidationError(
                f"the table changed since this change was built: {error}"
            ) from None
        return self.updates


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a lost commit is retried: the table's ``commit.retry.*``
    properties, with Java's defaults (TableProperties)."""

    num_retries: int = 4
    min_wait_ms: int = 100
    max_wait_ms: int = 60_000
    total_timeout_ms: int = 1_800_000

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> RetryPolicy:
        default = cls()
        return cls(
            int_property(properties, "commit.retry.num-retries", default.num_retries, minimum=0),
            int_property(properties, "commit.retry.min-wait-ms", default.min_wait_ms, minimum=0),
            int_property(properties, "commit.retry.max-wait-ms", default.max_wait_ms, minimum=0),
            int_property(
                properties, "commit.retry.total-timeout-ms", default.total_timeout_ms, minimum=0
            ),
        )

    def wait_ms(self, attempt: int) -> float:
        """Java's Tasks.exponentialBackoff: min * 2^(attempt-1), capped, with up to 10% jitter."""
        delay = min(self.min_wait_ms * 2.0 ** (attempt - 1), float(self.max_wait_ms))
        return delay + delay * 0.1 * random.random()


class Transaction:
    """Changes to one table committed together. Use as a context manager (commits on a clean
    exit) or call :meth:`commit_transaction`."""

    def __init__(self, table: Table) -> None:
        if table.catalog is None:
            raise FrazilError(
                f"{table!r} was opened without a catalog and is read-only: load it through a "
                "catalog to commit"
            )
        self._table = table
        self._changes: list[PendingChange] = []
        self._staged = table.metadata
        # The updates add_change computed for each change, and the base they were staged on:
        # the first attempt reuses them while the table is still at that base (computing them
        # again would write every producer's manifest list twice); a retry on a refreshed base
        # recomputes them.
        self._staged_updates: list[tuple[TableUpdate, ...]] = []
        self._staged_base = table.metadata
        self._staged_base_location = table.metadata_location
        self._done = False

    @property
    def table(self) -> Table:
        return self._table

    @property
    def staged_metadata(self) -> TableMetadata:
        """The table's metadata with this transaction's changes applied (not committed)."""
        return self._staged

    def add_change(self, change: PendingChange) -> TableMetadata:
        """Add ``change`` (applied to the staged metadata now, to catch errors early)."""
        if self._done:
            raise FrazilError("this transaction has already been committed or abandoned")
        updates = self._updates_of(change, self._staged)
        self._staged = apply_updates(self._staged, updates)
        self._changes.append(change)
        self._staged_updates.append(updates)
        return self._staged

    def _updates_of(self, change: PendingChange, staged: TableMetadata) -> tuple[TableUpdate, ...]:
        """``change.updates_for(staged)``; a file of the table's metadata that is gone most
        likely means the table was dropped with its files since it was loaded: say so."""
        try:
            return change.updates_for(staged)
        except NoSuchTableError:
            raise
        except NotFoundError as error:
            table = self._table
            catalog = table.catalog
            if catalog is None or catalog.table_exists(table.identifier):
                raise
            raise NoSuchTableError(
                f"table {'.'.join(table.identifier)!r} was dropped since it was loaded ({error})"
            ) from error

    def _stage_builder(
        self, updates: tuple[TableUpdate, ...], requirements: tuple[TableRequirement, ...]
    ) -> TableMetadata:
        return self.add_change(BuilderChange(updates, requirements))

    # --- the builders, staged into this transaction -----------------------------------------

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        from frazil.table.update_schema import UpdateSchema

        return UpdateSchema(
            self._staged,
            allow_incompatible_changes=allow_incompatible_changes,
            case_sensitive=case_sensitive,
            committer=self._stage_builder,
        )

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        from frazil.table.update_spec import UpdateSpec

        return UpdateSpec(
            self._staged, case_sensitive=case_sensitive, committer=self._stage_builder
        )

    def update_sort_order(self, case_sensitive: bool = True) -> UpdateSortOrder:
        from frazil.table.update_sort_order import UpdateSortOrder

        return UpdateSortOrder(
            self._staged, case_sensitive=case_sensitive, committer=self._stage_builder
        )

    def manage_snapshots(self) -> ManageSnapshots:
        from frazil.table.manage_snapshots import ManageSnapshots

        return ManageSnapshots(self._staged, committer=self._stage_builder, owner=self)

    def set_properties(
        self, properties: Mapping[str, str] | None = None, **kwargs: str
    ) -> Transaction:
        updates = {**(properties or {}), **kwargs}
        version = updates.pop("format-version", None)
        if version is not None:
            # Reserved: never stored as a property. Setting it upgrades the table, as Spark's
            # ALTER TABLE ... SET TBLPROPERTIES ('format-version'=...) does.
            try:
                number = int(str(version).strip())
            except ValueError:
                raise InvalidValueError(
                    f"table property format-version={version!r} is not a format version"
                ) from None
            self.add_change(BuilderChange((UpgradeFormatVersion(number),), ()))
        if updates:
            change = SetProperties(updates)  # checks that keys and values are strings
            # A property frazil's writers cannot honour is refused when set, not at the next
            # write (write.format.default=orc); one the table had already is left to the writes.
            staged = self._staged
            check_write_properties(
                {**staged.properties, **updates},
                staged.schema(),
                location=staged.location,
                before=staged.properties,
            )
            self.add_change(BuilderChange((change,), ()))
        return self

    def remove_properties(self, *keys: str) -> Transaction:
        if keys:
            self.add_change(BuilderChange((RemoveProperties(tuple(keys)),), ()))
        return self

    # --- writes (snapshot producers; frazil.table.snapshot.api) -------------------------------

    def append(
        self,
        data: Any,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Append ``data`` (a pyarrow Table, RecordBatchReader or ``__arrow_c_stream__``)."""
        from frazil.table.snapshot import api

        api.append(self, data, branch, snapshot_properties)
        return self

    def overwrite(
        self,
        data: Any,
        overwrite_filter: Any = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """Replace the rows matching ``overwrite_filter`` (default: every row) by ``data``."""
        from frazil.table.snapshot import api

        api.overwrite(self, data, overwrite_filter, branch, snapshot_properties, case_sensitive)
        return self

    def dynamic_partition_overwrite(
        self,
        data: Any,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Transaction:
        """Replace every partition ``data`` has rows in by ``data``."""
        from frazil.table.snapshot import api

        api.dynamic_partition_overwrite(self, data, branch, snapshot_properties)
        return self

    def delete(
        self,
        delete_filter: Any,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """Delete the rows matching ``delete_filter`` (an expression or its text form)."""
        from frazil.table.snapshot import api

        api.delete(self, delete_filter, branch, snapshot_properties, case_sensitive)
        return self

    def update(
        self,
        set: Mapping[str, Any],  # Spark's name, shadowing the builtin here only
        where: Any = None,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> Any:
        """Set columns of the rows matching ``where`` (default: all rows): ``set`` maps a column
        to a Python literal (converted to the column's type) or another column
        (``frazil.expressions.col("other")``). Per ``write.update.mode``; returns an
        :class:`~frazil.table.row_level.update.UpdateResult`."""
        from frazil.table.row_level.update import stage_update

        return stage_update(self, set, where, branch, snapshot_properties, case_sensitive)

    def upsert(
        self,
        df: Any,
        join_cols: Any = None,
        when_matched_update_all: bool = True,
        when_not_matched_insert_all: bool = True,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Any:
        """:meth:`frazil.table.Table.upsert` staged in this transaction."""
        from frazil.table.row_level.merge import upsert

        return upsert(
            self.table,
            df,
            join_cols,
            when_matched_update_all,
            when_not_matched_insert_all,
            case_sensitive,
            branch,
            snapshot_properties,
            transaction=self,
        )

    def merge(
        self,
        source: Any,
        on: Any,
        *,
        case_sensitive: bool = True,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
    ) -> Any:
        """:meth:`frazil.table.Table.merge` staged in this transaction on ``execute()``."""
        from frazil.table.row_level.merge import MergeBuilder

        return MergeBuilder(
            self.table,
            source,
            on,
            case_sensitive=case_sensitive,
            branch=branch,
            snapshot_properties=snapshot_properties,
            transaction=self,
        )

    def row_delta(
        self,
        add: Any = None,
        delete_keys: Any = None,
        key_columns: Any = None,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        conflict_detection_filter: Any = None,
        isolation_level: str | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """New rows (``add``) and equality deletes of every earlier row whose key columns
        (``key_columns``, default the identifier fields) equal a row of ``delete_keys``, in one
        snapshot (Java's ``RowDelta``; see :mod:`frazil.table.row_level.keys`). Validated as
        Spark validates row-level commands: no delete file that may apply to rows matching
        ``conflict_detection_filter`` (default: all rows) added meanwhile, and under
        ``serializable`` isolation (default: ``write.update.isolation-level``) no data file
        that may hold such rows."""
        from frazil.table.row_level.keys import stage_row_delta

        stage_row_delta(
            self,
            add,
            delete_keys,
            key_columns,
            branch=branch,
            snapshot_properties=snapshot_properties,
            conflict_detection_filter=conflict_detection_filter,
            isolation=isolation_level,
            case_sensitive=case_sensitive,
        )
        return self

    def delete_by_key(
        self,
        keys: Any,
        key_columns: Any = None,
        *,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        conflict_detection_filter: Any = None,
        isolation_level: str | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """Equality deletes alone: :meth:`row_delta` with ``delete_keys=keys``."""
        return self.row_delta(
            None,
            keys,
            key_columns,
            branch=branch,
            snapshot_properties=snapshot_properties,
            conflict_detection_filter=conflict_detection_filter,
            isolation_level=isolation_level,
            case_sensitive=case_sensitive,
        )

    def add_files(
        self,
        file_paths: Any,
        branch: str | None = None,
        snapshot_properties: Mapping[str, str] | None = None,
        check_duplicate_files: bool = True,
    ) -> Transaction:
        """Register existing Parquet files as data files of the table."""
        from frazil.table.snapshot import api

        api.add_files(self, file_paths, branch, snapshot_properties, check_duplicate_files)
        return self

    def cherry_pick(self, snapshot_id: int, branch: str | None = None) -> Transaction:
        """Apply the appended files of ``snapshot_id`` to ``branch`` (a fast-forward when the
        snapshot's parent is the branch head)."""
        from frazil.table.snapshot import api

        api.cherry_pick(self, snapshot_id, branch)
        return self

    # --- committing ------------------------------------------------------------------------

    def _cleanup(self, committed: bool) -> None:
        self._done = True
        for change in self._changes:
            change.cleanup(committed)

    def _attempt_updates(self, base: TableMetadata, base_location: str | None) -> list[TableUpdate]:
        """Every change's updates on ``base``: those add_change staged when ``base`` is the
        metadata they were staged on, else each change's ``updates_for`` anew, in order, each
        on the metadata the earlier ones produce."""
        if base is self._staged_base and base_location == self._staged_base_location:
            return [update for updates in self._staged_updates for update in updates]
        staged = base
        out: list[TableUpdate] = []
        for change in self._changes:
            change_updates = self._updates_of(change, staged)
            staged = apply_updates(staged, change_updates)
            out.extend(change_updates)
        return out

    def commit_transaction(self) -> Table:
        """Commit every change at once, retrying lost races; returns the refreshed table."""
        if self._done:
            raise FrazilError("this transaction has already been committed or abandoned")
        table = self._table
        catalog = table.catalog
        assert catalog is not None
        policy = RetryPolicy.from_properties(table.properties)
        started = time.monotonic()
        attempt = 0
        while True:
            base = table.metadata
            try:
                updates = self._attempt_updates(base, table.metadata_location)
                if not updates and table.metadata_location is not None:
                    self._cleanup(True)
                    return table
                # A table not created yet (a create-table transaction) requires that it still
                # does not exist: Java's UpdateRequirements.forCreateTable.
                current = None if table.metadata_location is None else base
                response = catalog.commit_table(table, requirements_for(current, updates), updates)
            except CommitFailedError:
                attempt += 1
                elapsed_ms = (time.monotonic() - started) * 1000
                if attempt > policy.num_retries or elapsed_ms >= policy.total_timeout_ms:
                    self._cleanup(False)
                    raise
                time.sleep(policy.wait_ms(attempt) / 1000)
                try:
                    _refresh_if_moved(table)
                except BaseException:
                    # The table was dropped (or the catalog failed) between attempts: nothing
                    # was committed, so the changes' files go.
                    self._cleanup(False)
                    raise
                continue
            except CommitStateUnknownError:
                self._done = True
                raise
            except BaseException:
                self._cleanup(False)
                raise
            table._set_metadata(response.metadata, response.metadata_location)
            self._staged = response.metadata
            self._cleanup(True)
            return table

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit_transaction()
        elif not self._done:
            self._cleanup(False)


def _refresh_if_moved(table: Table) -> None:
    """Refresh ``table`` after a lost race, reading its metadata again only when the catalog
    points elsewhere now (a lost race that moved nothing, such as a busy SQLite database, needs
    no second read of a metadata file that grows with the table's history)."""
    catalog = table.catalog
    assert catalog is not None
    if catalog._current_metadata_location(table.identifier) != table.metadata_location:
        table.refresh()


class UpdateProperties:
    """Set and remove table properties; commits on a clean exit of the ``with`` block (or
    :meth:`commit`). Removal wins over a set of the same key made earlier."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._set: dict[str, str] = {}
        self._removed: set[str] = set()

    def set(self, key: str, value: str) -> UpdateProperties:
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValidationError(f"table properties are strings, got {key!r}: {value!r}")
        self._removed.discard(key)
        self._set[key] = value
        return self

    def remove(self, *keys: str) -> UpdateProperties:
        for key in keys:
            self._set.pop(key, None)
            self._removed.add(key)
        return self

    def commit(self) -> Table:
        transaction = Transaction(self._table)
        transaction.set_properties(self._set)
        transaction.remove_properties(*sorted(self._removed))
        return transaction.commit_transaction()

    def __enter__(self) -> UpdateProperties:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
