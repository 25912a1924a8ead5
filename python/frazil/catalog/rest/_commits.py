"""The REST catalog's commits (spec: updateTable, commitTransaction, reportMetrics): a
table's requirements and updates posted to its route, a create transaction's initialization
(:func:`creation_updates`) with ``assert-create``, several tables at once through
``/transactions/commit``, and a commit report after each commit, best effort.

An answer that leaves the outcome open (a 5xx, a lost connection, a 2xx whose body cannot be
read) is :class:`~frazil.errors.CommitStateUnknownError`, which the transaction answers by
keeping every file; a 409 is :class:`~frazil.errors.CommitFailedError`, which it retries."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from frazil.catalog import COMMIT_RETRIES, CommitTableResponse, IdentifierLike, TableChange
from frazil.catalog.rest import protocol as p
from frazil.catalog.rest._base import RestCalls
from frazil.catalog.rest._base import name as _name
from frazil.errors import (
    AlreadyExistsError,
    CommitFailedError,
    CommitStateUnknownError,
    FrazilError,
    InvalidMetadataError,
    TableAlreadyExistsError,
    ValidationError,
)
from frazil.metadata import TableMetadata
from frazil.table.requirements import AssertCreate

if TYPE_CHECKING:
    from frazil.catalog import Identifier
    from frazil.catalog.rest._metrics import ReportSender
    from frazil.table._table import Table
    from frazil.table.requirements import TableRequirement
    from frazil.table.transaction import Transaction
    from frazil.table.updates import TableUpdate

__all__ = ["CommitOperations", "creation_updates"]

LOG = logging.getLogger("frazil.catalog.rest")


def creation_updates(metadata: TableMetadata) -> list[TableUpdate]:
    """The updates that build ``metadata`` (a staged, empty table) from nothing, as a REST
    create transaction sends them with ``assert-create`` (the spec's updateTable: "Transactions
    should include all changes to the table, including table initialization"; Java's
    ``TableMetadata.Builder`` changes of a new table)."""
    from frazil.table.updates import (
        AddPartitionSpec,
        AddSchema,
        AddSortOrder,
        AssignUUID,
        SetCurrentSchema,
        SetDefaultSortOrder,
        SetDefaultSpec,
        SetLocation,
        SetProperties,
        UpgradeFormatVersion,
    )

    if metadata.snapshots:
        raise ValidationError("creation_updates takes a new table's metadata, without snapshots")
    updates: list[TableUpdate] = []
    if metadata.table_uuid is not None:
        updates.append(AssignUUID(metadata.table_uuid))
    updates.append(UpgradeFormatVersion(metadata.format_version))
    updates.extend(AddSchema(schema) for schema in metadata.schemas)
    updates.append(SetCurrentSchema(metadata.current_schema_id))
    updates.extend(AddPartitionSpec(spec) for spec in metadata.partition_specs)
    updates.append(SetDefaultSpec(metadata.default_spec_id))
    updates.extend(AddSortOrder(order) for order in metadata.sort_orders)
    updates.append(SetDefaultSortOrder(metadata.default_sort_order_id))
    updates.append(SetLocation(metadata.location))
    if metadata.properties:
        updates.append(SetProperties(dict(metadata.properties)))
    return updates


class CommitOperations(RestCalls):
    """The commit methods of :class:`~frazil.catalog.rest.RestCatalog` (module docs)."""

    if TYPE_CHECKING:
        _report_metrics: bool
        _reports: ReportSender

    def _post_commit(
        self,
        ident: Identifier,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
        creating: bool,
    ) -> p.CommitTableResponse:
        request = p.CommitTableRequest(tuple(requirements), tuple(updates), ident)
        what = f"{'create' if creating else 'commit to'} table {_name(ident)!r}"
        try:
            response = self._call(
                p.UPDATE_TABLE,
                what,
                "commit",
                namespace=ident[:-1],
                table=ident[-1],
                body=request.to_json(),
            )
        except (CommitFailedError, AlreadyExistsError) as error:
            if creating:
                # assert-create failed (Java answers CommitFailedException, frazil's server
                # AlreadyExistsException): the name was taken meanwhile, not retryable.
                raise TableAlreadyExistsError(
                    f"cannot create table {_name(ident)!r}: {error}"
                ) from None
            raise
        # The server answered 2xx: the commit landed, so an answer that cannot be read must
        # not let the transaction delete what it wrote.
        try:
            return p.CommitTableResponse.from_json(response.json())
        except FrazilError as error:
            raise CommitStateUnknownError(
                f"{what}: the server accepted the commit but its answer cannot be read "
                f"({error}); refresh the table"
            ) from None

    def commit_table(
        self,
        table: Table,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> CommitTableResponse:
        """Post ``requirements`` and ``updates`` to the table's route (spec: updateTable). The
        server validates the requirements against its current metadata, so no local check of
        the metadata location is made. A table not created yet (a create transaction) sends
        its initialization first (:func:`creation_updates`), with ``assert-create``."""
        creating = table.metadata_location is None
        all_updates = list(updates)
        if creating:
            all_updates = [*creation_updates(table.metadata), *all_updates]
        result = self._post_commit(table.identifier, requirements, all_updates, creating)
        if not creating:
            self._report_commit(table, result.metadata)
        return CommitTableResponse(result.metadata, result.metadata_location)

    def commit_updates(
        self,
        identifier: IdentifierLike,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
        *,
        read: Callable[[str], TableMetadata] | None = None,
        retries: int = COMMIT_RETRIES,
    ) -> CommitTableResponse:
        """Commit ``updates`` if ``requirements`` hold, by the server (``read`` and
        ``retries`` are the server's business here: a lost race on its side is its to retry,
        a failed requirement is CommitFailedError)."""
        ident = self._ident(identifier)
        creating = any(isinstance(r, AssertCreate) for r in requirements)
        result = self._post_commit(ident, requirements, updates, creating)
        return CommitTableResponse(result.metadata, result.metadata_location)

    def commit_transaction(
        self,
        changes: Sequence[TableChange],
        *,
        read: Callable[[str], TableMetadata] | None = None,
        retries: int = COMMIT_RETRIES,
    ) -> list[CommitTableResponse]:
        """Commit changes to several tables all or none (spec: commitTransaction, ``POST
        /v1/{prefix}/transactions/commit``). The server answers with no body, so each table is
        loaded afterwards for the result (a later commit by another writer may show). A 409 is
        CommitFailedError (nothing changed: refresh and build the changes again); a 5xx or a
        lost answer is CommitStateUnknownError."""
        if not changes:
            raise ValidationError("commit_transaction needs at least one table change")
        requests = tuple(
            p.CommitTableRequest(
                tuple(change.requirements), tuple(change.updates), self._ident(change.identifier)
            )
            for change in changes
        )
        request = p.CommitTransactionRequest(requests)
        names = ", ".join(repr(_name(r.identifier or ())) for r in requests)
        self._call(
            p.COMMIT_TRANSACTION, f"commit to tables {names}", "commit", body=request.to_json()
        )
        out = []
        for change in requests:
            assert change.identifier is not None
            loaded = self._load(change.identifier)
            if loaded.metadata_location is None:
                raise InvalidMetadataError(
                    f"table {_name(change.identifier)!r}: loaded without a metadata location "
                    "after the transaction"
                )
            out.append(CommitTableResponse(loaded.metadata, loaded.metadata_location))
        return out

    def commit_transactions(self, *transactions: Transaction) -> list[Table]:
        """Commit several tables' transactions (``table.transaction()``) at once, all or none,
        through :meth:`commit_transaction`; returns their tables, refreshed. Not retried: on
        CommitFailedError every transaction deletes what it wrote (build them again on the
        refreshed tables); on CommitStateUnknownError nothing is deleted."""
        from frazil.table.requirements import requirements_for

        changes = []
        for txn in transactions:
            table = txn.table
            if table.catalog is not cast(object, self) or table.metadata_location is None:
                raise ValidationError(
                    f"{table!r}: commit_transactions takes transactions of tables loaded from "
                    f"{self!r} (a create transaction commits on its own)"
                )
            updates = txn._attempt_updates(table.metadata, table.metadata_location)
            changes.append(
                TableChange(table.identifier, requirements_for(table.metadata, updates), updates)
            )
        try:
            results = self.commit_transaction(changes)
        except CommitStateUnknownError:
            for txn in transactions:
                txn._done = True
            raise
        except BaseException:
            for txn in transactions:
                txn._cleanup(False)
            raise
        for txn, result in zip(transactions, results, strict=True):
            table = txn.table
            table._set_metadata(
                table.metadata.check_refreshed(result.metadata), result.metadata_location
            )
            txn._staged = table.metadata
            txn._cleanup(True)
        return [txn.table for txn in transactions]

    def flush_metrics_reports(self, timeout: float | None = 30.0) -> bool:
        """Wait until the metrics reports of the commits so far are sent (they go in the
        background); True when none is left after ``timeout`` seconds."""
        return self._reports.flush(timeout)

    def _report_commit(self, table: Table, metadata: TableMetadata) -> None:
        """Post a commit report (spec: reportMetrics) in the background, best effort: a failure
        is logged, never raised (Java's RESTMetricsReporter does the same)."""
        if not self._report_metrics or p.REPORT_METRICS not in self.endpoints:
            return
        from frazil.catalog.rest._metrics import commit_report

        snapshot = metadata.current_snapshot()
        before = table.metadata.current_snapshot()
        if snapshot is None or (before is not None and before.snapshot_id == snapshot.snapshot_id):
            return
        ident = table.identifier
        body = commit_report(_name(ident), snapshot)

        def send() -> None:
            try:
                self._call(
                    p.REPORT_METRICS,
                    f"report metrics of table {_name(ident)!r}",
                    "table",
                    namespace=ident[:-1],
                    table=ident[-1],
                    body=body,
                )
            except FrazilError as error:
                LOG.warning("commit report of table %s not accepted: %s", _name(ident), error)

        self._reports.submit(send)
