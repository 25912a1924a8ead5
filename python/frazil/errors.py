"""The exceptions frazil raises.

Every error frazil raises is a :class:`FrazilError`. Subclasses say what went
wrong, and several also derive from the matching built-in exception so that
code written against ``ValueError`` or ``TypeError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "AlreadyExistsError",
    "BadRequestError",
    "CommitFailedError",
    "CommitStateUnknownError",
    "CommitValidationError",
    "ExpressionSyntaxError",
    "ForbiddenError",
    "FrazilError",
    "FrazilIOError",
    "FrazilTypeError",
    "InternalError",
    "InvalidDataError",
    "InvalidMetadataError",
    "InvalidSchemaError",
    "InvalidTransformError",
    "InvalidUpdateError",
    "InvalidValueError",
    "LostConnectionError",
    "MissingDependencyError",
    "NamespaceAlreadyExistsError",
    "NamespaceNotEmptyError",
    "NoSuchNamespaceError",
    "NoSuchPlanIdError",
    "NoSuchPlanTaskError",
    "NoSuchTableError",
    "NoSuchViewError",
    "NotAuthorizedError",
    "NotFoundError",
    "PermissionDeniedError",
    "PurgeIncompleteError",
    "SchemaMismatchError",
    "ServiceFailureError",
    "ServiceUnavailableError",
    "SparkJobError",
    "TableAlreadyExistsError",
    "TableUUIDMismatchError",
    "UnknownFieldError",
    "UnknownTypeError",
    "UnsafeNameError",
    "UnsupportedFormatVersionError",
    "UnsupportedOperationError",
    "UnsupportedTransformError",
    "ValidationError",
    "ViewAlreadyExistsError",
]


class FrazilError(Exception):
    """Base class of every error raised by frazil."""


class ValidationError(FrazilError, ValueError):
    """Input that frazil understood but refuses: it breaks a rule of the spec."""


class FrazilTypeError(FrazilError, TypeError):
    """A value of the wrong kind for the Iceberg or Arrow type it was given for."""


class UnknownTypeError(ValidationError):
    """An Iceberg type string or type JSON that does not parse."""


class InvalidTransformError(ValidationError):
    """A transform string that does not parse, or a bad parameter (N <= 0, W <= 0)."""


class UnsupportedTransformError(ValidationError):
    """A transform that the spec does not define for the given source type."""


class InvalidValueError(ValidationError):
    """A value that is out of range or malformed for its type."""


class InvalidMetadataError(ValidationError):
    """Table or view metadata (JSON or model) that breaks a rule of the spec or misses a field."""


class InvalidSchemaError(InvalidMetadataError):
    """A schema that breaks a rule of the spec: duplicate or reserved field ids, bad identifier
    fields, a type or default value its format version does not allow."""


class InvalidUpdateError(ValidationError):
    """A metadata update or an evolution (schema, partition spec, sort order, view) that breaks a
    rule of the spec: a narrowing type change, a reused field id, a downgrade, and so on."""


class CommitFailedError(FrazilError):
    """A commit whose requirements no longer hold: the table changed since the update was built
    (the REST catalog's ``CommitFailedException``). Refresh and retry."""


class CommitValidationError(ValidationError):
    """A commit refused for good, not retried: the table changed since the operation was built
    in a way that invalidates it (a file it removes is gone, data matching an overwrite filter
    was added under serializable isolation, the schema a schema change was built on changed).
    Java's ``ValidationException`` (spec: "Commit Conflict Resolution and Retry")."""


class CommitStateUnknownError(FrazilError):
    """The catalog did not answer whether a commit landed (a lost connection after the pointer
    swap was sent). Nothing the commit wrote is deleted, since it may now be live: refresh the
    table to find out."""


class UnsupportedFormatVersionError(ValidationError):
    """Metadata of a format version newer (or other) than frazil supports."""


class TableUUIDMismatchError(InvalidMetadataError):
    """Refreshed metadata whose table-uuid is not the table's (spec: Table Metadata Fields)."""


class UnknownFieldError(ValidationError, KeyError):
    """A field name or id that a schema does not have."""

    def __str__(self) -> str:
        # KeyError quotes its argument; show the message as written.
        return str(self.args[0]) if self.args else ""


class ExpressionSyntaxError(ValidationError):
    """A filter in the text form that does not parse; the message names the 1-based character
    position and what was expected there."""


class InvalidDataError(FrazilError, ValueError):
    """Data that cannot be read: corrupt, truncated, or of the wrong format."""


class SchemaMismatchError(ValidationError):
    """Arrow data does not fit the table schema; the message lists every mismatch."""


class InternalError(FrazilError, RuntimeError):
    """A bug in frazil (a caught panic of its Rust core). Please report it."""


class FrazilIOError(FrazilError, OSError):
    """Storage failed (network, disk, an object store's error); the message names the location."""


class NotFoundError(FrazilIOError, FileNotFoundError):
    """A file, object or table location that does not exist; the message names it."""


class PermissionDeniedError(FrazilIOError, PermissionError):
    """Storage refused access to a location (credentials, permissions); the message names it."""


class AlreadyExistsError(FrazilIOError, FileExistsError):
    """A file, object or catalog entry that must not exist yet already does (a metadata file is
    written once); the message names it."""


class LostConnectionError(FrazilIOError, ConnectionError):
    """A catalog's database or REST server stopped answering after a statement or request was
    sent, so whether it took effect is unknown; the message names the database or the request.
    (A commit that loses its connection raises :class:`CommitStateUnknownError` instead.)"""


# --- catalogs -------------------------------------------------------------------------------


class NoSuchNamespaceError(NotFoundError):
    """A namespace the catalog does not have; the message names it."""


class NoSuchTableError(NotFoundError):
    """A table the catalog does not have (or no longer has); the message names it."""


class NoSuchViewError(NotFoundError):
    """A view the catalog does not have; the message names it."""


class NamespaceAlreadyExistsError(AlreadyExistsError):
    """A namespace created twice; the message names it."""


class TableAlreadyExistsError(AlreadyExistsError):
    """A table (or a view of the same name) already exists; the message names it."""


class ViewAlreadyExistsError(AlreadyExistsError):
    """A view (or a table of the same name) already exists; the message names it."""


class NamespaceNotEmptyError(ValidationError):
    """A namespace dropped while it still holds tables, views or namespaces."""


class UnsafeNameError(ValidationError):
    """A namespace, table or view name that cannot become part of a storage path: empty, ``.``
    or ``..``, or holding ``/``, ``\\``, a NUL or a control character."""


class UnsupportedOperationError(FrazilError):
    """An operation this catalog (or its storage) cannot do, such as renaming a table of a
    file-system catalog, or committing to an object store without conditional writes."""


class SparkJobError(FrazilError):
    """A Spark job frazil ran (a write's tasks, a distributed plan) failed; the message names
    the table and Spark's error, which is chained."""


class MissingDependencyError(FrazilError, ImportError):
    """An optional integration used without the package it needs (``frazil.spark`` without
    pyspark); the message names the pip extra that installs it."""


class PurgeIncompleteError(FrazilError):
    """``drop_table(purge=True)`` (or ``purge_table``) dropped the table, whose catalog entry
    is gone, but could not delete every file it reached: ``unreadable`` maps the files it could
    not read (a damaged or missing manifest list or manifest, whose own files it could not
    find and kept) to why, ``undeleted`` the files whose delete failed to why. Everything else
    reachable was deleted. ``identifier`` is the dropped table."""

    def __init__(
        self,
        message: str,
        identifier: tuple[str, ...] = (),
        unreadable: dict[str, str] | None = None,
        undeleted: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.identifier = identifier
        self.unreadable: dict[str, str] = dict(unreadable or {})
        self.undeleted: dict[str, str] = dict(undeleted or {})


# --- the REST catalog protocol (frazil.catalog.rest.protocol maps each to its ErrorModel) ----


class BadRequestError(ValidationError):
    """A REST catalog refused a request as malformed (HTTP 400, ``BadRequestException``): a
    body that is not JSON or misses a field, an unknown update or requirement, an unsafe name.
    The message is the server's."""


class NotAuthorizedError(FrazilError, PermissionError):
    """A REST catalog refused a request without valid credentials (HTTP 401 or 419,
    ``NotAuthorizedException``): no bearer token, an unknown or expired one, or client
    credentials the token endpoint does not know."""


class ForbiddenError(FrazilError, PermissionError):
    """A REST catalog refused a request its credentials do not permit (HTTP 403,
    ``ForbiddenException``)."""


class ServiceUnavailableError(FrazilIOError):
    """A REST catalog is not ready to serve the request (HTTP 503); it may have been partly
    processed. Retry later."""


class ServiceFailureError(FrazilIOError):
    """A REST catalog failed on its side (HTTP 500 or another 5xx outside a commit); the
    message is the server's."""


class NoSuchPlanIdError(NotFoundError):
    """A server-side scan plan id the REST catalog does not know (or no longer holds)."""


class NoSuchPlanTaskError(NotFoundError):
    """A plan task of server-side scan planning the REST catalog does not know."""
