"""The common shape of the evolution builders (schema, partition spec, sort order).

A builder is created from the table's current metadata, collects changes through its methods,
and produces ``(updates, requirements)``: the updates to commit and the requirements that must
still hold of the table when they are applied (the REST protocol's commit body). Until catalogs
exist, :meth:`EvolutionBuilder.commit_to` checks the requirements against a TableMetadata and
applies the updates to it. Used as a context manager, the builder commits on a clean exit and
leaves the new metadata in :attr:`EvolutionBuilder.metadata`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Generic, TypeVar

from frazil.errors import FrazilError, InvalidUpdateError
from frazil.metadata import TableMetadata
from frazil.table._apply import apply_updates
from frazil.table.requirements import TableRequirement, requirements_for, validate_requirements
from frazil.table.updates import TableUpdate

__all__ = ["Committer", "EvolutionBuilder"]

Result = TypeVar("Result")
# How a table commits: given the updates and requirements, return the new metadata (a catalog
# checks the requirements against the table's latest metadata and applies the updates).
Committer = Callable[[tuple[TableUpdate, ...], tuple[TableRequirement, ...]], TableMetadata]
_Self = TypeVar("_Self", bound="EvolutionBuilder[Any]")


class EvolutionBuilder(Generic[Result]):
    """Base of the evolution builders. ``Result`` is what :meth:`apply` returns."""

    def __init__(self, metadata: TableMetadata, committer: Committer | None = None) -> None:
        if not isinstance(metadata, TableMetadata):
            raise InvalidUpdateError(
                f"{type(self).__name__} needs a TableMetadata, got {type(metadata).__name__}"
            )
        self._base = metadata
        self._committer = committer
        self._result: TableMetadata | None = None

    @property
    def base(self) -> TableMetadata:
        """The metadata the changes were built against."""
        return self._base

    def apply(self) -> Result:
        """The new schema, spec or order, without committing anything."""
        raise NotImplementedError

    def updates(self) -> tuple[TableUpdate, ...]:
        """The table updates that commit these changes (empty when nothing changes)."""
        raise NotImplementedError

    def updates_and_requirements(
        self,
    ) -> tuple[tuple[TableUpdate, ...], tuple[TableRequirement, ...]]:
        """The updates and the requirements a catalog must check before applying them."""
        updates = self.updates()
        if not updates:
            return (), ()
        return updates, requirements_for(self._base, updates)

    def commit_to(
        self, metadata: TableMetadata | None = None, *, timestamp_ms: int | None = None
    ) -> TableMetadata:
        """Check the requirements against ``metadata`` (default: the base metadata), apply the
        updates to it and return the new metadata. Raises CommitFailedError when ``metadata``
        changed in a way that conflicts. A builder given a ``committer`` (a table's commit
        function) hands it the updates and requirements instead when no metadata is given."""
        updates, requirements = self.updates_and_requirements()
        if metadata is None and self._committer is not None:
            self._result = self._committer(updates, requirements)
            return self._result
        target = self._base if metadata is None else metadata
        validate_requirements(requirements, target)
        self._result = apply_updates(target, updates, timestamp_ms=timestamp_ms)
        return self._result

    def commit(self) -> TableMetadata:
        """Commit to the table (or transaction) the builder came from, as pyiceberg's
        ``.commit()``: :meth:`commit_to` without arguments. Returns the new metadata."""
        return self.commit_to()

    @property
    def metadata(self) -> TableMetadata:
        """The metadata committed by :meth:`commit_to` or by leaving the ``with`` block."""
        if self._result is None:
            raise FrazilError(f"{type(self).__name__} has not been committed yet")
        return self._result

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit_to()
