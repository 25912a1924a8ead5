"""The error model both ways (the OpenAPI's ErrorModel; Java's ErrorHandlers)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from frazil import _jsonutil as js
from frazil.errors import (
    AlreadyExistsError,
    BadRequestError,
    CommitFailedError,
    CommitStateUnknownError,
    CommitValidationError,
    ForbiddenError,
    FrazilError,
    FrazilIOError,
    FrazilTypeError,
    InvalidDataError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchPlanIdError,
    NoSuchPlanTaskError,
    NoSuchTableError,
    NoSuchViewError,
    NotAuthorizedError,
    NotFoundError,
    ServiceFailureError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    UnsupportedOperationError,
    ValidationError,
    ViewAlreadyExistsError,
)

# --- the error model ------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorModel:
    """The body of every error response: ``{"error": {"message", "type", "code", "stack"}}``."""

    message: str
    type: str
    code: int
    stack: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message, "type": self.type, "code": self.code}
        if self.stack:
            error["stack"] = list(self.stack)
        return {"error": error}

    @classmethod
    def from_json(cls, node: Any) -> ErrorModel:
        outer = js.as_object(node, "error response")
        obj = js.as_object(outer.get("error"), "error response field 'error'")
        what = "error model"
        code = js.get_int(obj, "code", what)
        stack = js.get_str_list(obj, "stack", what) if obj.get("stack") is not None else ()
        return cls(js.get_str(obj, "message", what), js.get_str(obj, "type", what), code, stack)


# Server side: a frazil error's Java exception type and HTTP status, most specific class first
# (the OpenAPI's responses; Java's RESTCatalogAdapter maps its exceptions the same way).
_ERROR_TYPES: tuple[tuple[type[BaseException], str, int], ...] = (
    (NoSuchTableError, "NoSuchTableException", 404),
    (NoSuchViewError, "NoSuchViewException", 404),
    (NoSuchNamespaceError, "NoSuchNamespaceException", 404),
    (NoSuchPlanIdError, "NoSuchPlanIdException", 404),
    (NoSuchPlanTaskError, "NoSuchPlanTaskException", 404),
    (NotFoundError, "NotFoundException", 404),
    (AlreadyExistsError, "AlreadyExistsException", 409),
    (NamespaceNotEmptyError, "NamespaceNotEmptyException", 409),
    (CommitFailedError, "CommitFailedException", 409),
    (CommitStateUnknownError, "CommitStateUnknownException", 500),
    (CommitValidationError, "ValidationException", 400),
    (NotAuthorizedError, "NotAuthorizedException", 401),
    (ForbiddenError, "ForbiddenException", 403),
    (UnsupportedOperationError, "UnsupportedOperationException", 406),
    (ServiceUnavailableError, "ServiceUnavailableException", 503),
    (ValidationError, "BadRequestException", 400),
    (FrazilTypeError, "BadRequestException", 400),
    # Unreadable input (a register of a file that is not metadata): the request's fault.
    (InvalidDataError, "BadRequestException", 400),
    (ServiceFailureError, "ServiceFailureException", 500),
    (FrazilIOError, "ServiceFailureException", 500),
)


def error_model(
    error: BaseException, *, message: str | None = None, stack: Sequence[str] = ()
) -> ErrorModel:
    """The ErrorModel a server answers ``error`` with: its type and status per the OpenAPI
    (any error outside the table above is a 500 ``InternalServerError``)."""
    text = str(error) if message is None else message
    for cls, type_name, code in _ERROR_TYPES:
        if isinstance(error, cls):
            return ErrorModel(text, type_name, code, tuple(stack))
    return ErrorModel(text or type(error).__name__, "InternalServerError", 500, tuple(stack))


ErrorContext = Literal[
    "default", "namespace", "drop-namespace", "table", "create-table", "commit", "view",
    "view-commit", "plan",
]  # fmt: skip

# Client side: the error a type name stands for, whatever the route.
_TYPE_ERRORS: dict[str, type[FrazilError]] = {
    "NoSuchTableException": NoSuchTableError,
    "NoSuchViewException": NoSuchViewError,
    "NoSuchNamespaceException": NoSuchNamespaceError,
    "NoSuchPlanIdException": NoSuchPlanIdError,
    "NoSuchPlanTaskException": NoSuchPlanTaskError,
    "NotFoundException": NotFoundError,
    "NamespaceNotEmptyException": NamespaceNotEmptyError,
    "CommitFailedException": CommitFailedError,
    "CommitStateUnknownException": CommitStateUnknownError,
    "ValidationException": CommitValidationError,
    "NotAuthorizedException": NotAuthorizedError,
    "AuthenticationTimeoutException": NotAuthorizedError,
    "ForbiddenException": ForbiddenError,
    "UnsupportedOperationException": UnsupportedOperationError,
    "ServiceUnavailableException": ServiceUnavailableError,
    "ServiceFailureException": ServiceFailureError,
    "BadRequestException": BadRequestError,
    "IllegalArgumentException": BadRequestError,
}
_ALREADY_EXISTS: dict[str, type[AlreadyExistsError]] = {
    "namespace": NamespaceAlreadyExistsError,
    "table": TableAlreadyExistsError,
    "create-table": TableAlreadyExistsError,
    "view": ViewAlreadyExistsError,
}
_NOT_FOUND: dict[str, type[NotFoundError]] = {
    "namespace": NoSuchNamespaceError,
    "drop-namespace": NoSuchNamespaceError,
    "table": NoSuchTableError,
    "create-table": NoSuchNamespaceError,
    "commit": NoSuchTableError,
    "plan": NoSuchTableError,
    "view": NoSuchViewError,
    "view-commit": NoSuchViewError,
}


def error_from_model(model: ErrorModel, context: ErrorContext = "default") -> FrazilError:
    """The frazil error a client raises for an error response, as Java's ``ErrorHandlers``
    decide: in a commit (``commit``, ``view-commit``) any 500, 502, 503 or 504 leaves the
    commit's outcome unknown (CommitStateUnknownError) and a 409 is CommitFailedError; else
    the type name decides, then the status within the route's ``context`` (a 404 of a table
    route is NoSuchTableError, a 409 of a namespace route NamespaceAlreadyExistsError)."""
    message = model.message
    commit = context in ("commit", "view-commit")
    if commit and model.code in (500, 502, 503, 504):
        return CommitStateUnknownError(
            f"the REST catalog failed during the commit ({model.code} {model.type}: {message}); "
            "the commit may or may not have landed: refresh to find out"
        )
    if context == "drop-namespace" and model.code == 409:
        return NamespaceNotEmptyError(message)
    if model.type == "AlreadyExistsException":
        return _ALREADY_EXISTS.get(context, AlreadyExistsError)(message)
    known = _TYPE_ERRORS.get(model.type)
    if known is not None:
        return known(message)
    code = model.code
    if code == 409:
        if commit:
            return CommitFailedError(message)
        return _ALREADY_EXISTS.get(context, AlreadyExistsError)(message)
    if code == 404:
        return _NOT_FOUND.get(context, NotFoundError)(message)
    if code in (401, 419):
        return NotAuthorizedError(message)
    if code == 403:
        return ForbiddenError(message)
    if code in (405, 406, 501):
        return UnsupportedOperationError(message)
    if code == 503:
        return ServiceUnavailableError(message)
    if 400 <= code < 500:
        return BadRequestError(f"{message} ({code} {model.type})")
    return ServiceFailureError(f"{message} ({code} {model.type})")


def read_json(body: bytes | str, what: str) -> Any:
    """A request body parsed as JSON; malformed JSON is a BadRequestError naming ``what``."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequestError(f"malformed {what}: not valid JSON ({error})") from None
    except RecursionError:
        raise BadRequestError(f"malformed {what}: JSON nested too deeply") from None


def dumps(node: Any) -> str:
    """Compact JSON text, non-ASCII kept as UTF-8 (as Java's Jackson writes)."""
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)
