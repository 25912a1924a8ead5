"""What the REST catalog's parts share: the calls they make through
:class:`~frazil.catalog.rest.RestCatalog` (declared here for the mixins that use them), and the
reading of answers: a 2xx body parsed (:func:`parse`), an error answer mapped onto frazil's
errors through the protocol's error model (:func:`error_for`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from frazil.catalog.rest import protocol as p
from frazil.errors import FrazilError, InvalidMetadataError, InvalidValueError

if TYPE_CHECKING:
    from frazil.catalog import Identifier, IdentifierLike
    from frazil.catalog.rest._http import Response

__all__ = ["RestCalls", "error_for", "identifiers_page", "name", "parse"]

T = TypeVar("T")


def name(identifier: Sequence[str]) -> str:
    return ".".join(identifier)


class RestCalls:
    """The RestCatalog methods its mixins (views, commits) call."""

    if TYPE_CHECKING:
        endpoints: frozenset[p.Endpoint]
        uri: str

        def _call(
            self,
            endpoint: p.Endpoint,
            what: str,
            context: p.ErrorContext,
            *,
            namespace: Sequence[str] | None = None,
            table: str | None = None,
            view: str | None = None,
            plan_id: str | None = None,
            params: Mapping[str, str] | None = None,
            body: Any = None,
            headers: Mapping[str, str] | None = None,
            not_modified_ok: bool = False,
        ) -> Response: ...

        def _ident(self, identifier: IdentifierLike, what: str = "table") -> Identifier: ...

        def _load(self, ident: Identifier) -> p.LoadTableResult: ...

        def _paged(
            self,
            endpoint: p.Endpoint,
            what: str,
            context: p.ErrorContext,
            parse: Callable[[Any], tuple[Sequence[Identifier], str | None]],
            *,
            namespace: Sequence[str] | None = None,
            params: Mapping[str, str] | None = None,
        ) -> list[Identifier]: ...


def identifiers_page(node: Any) -> tuple[Sequence[Identifier], str | None]:
    """One page of a table or view listing (both answer a ListTablesResponse)."""
    page = p.ListTablesResponse.from_json(node)
    return page.identifiers, page.next_page_token


def parse(response: Response, parse: Callable[[Any], T], what: str) -> T:
    """``parse`` of a 2xx answer's JSON; an answer that does not fit names the call."""
    try:
        return parse(response.json())
    except (InvalidMetadataError, InvalidValueError) as error:
        raise InvalidMetadataError(
            f"{what}: the REST catalog's answer is not valid: {error}"
        ) from None


def error_for(response: Response, context: p.ErrorContext, what: str) -> FrazilError:
    """The frazil error of a non-2xx answer (its ErrorModel through protocol's mapping, as
    Java's ErrorHandlers), its message naming the operation and the server's message."""
    model: p.ErrorModel | None = None
    try:
        model = p.ErrorModel.from_json(response.json())
    except FrazilError:
        model = None
    if model is None:
        # Not the spec's error model (a proxy's page, a HEAD without a body): the status decides.
        text = response.body.decode("utf-8", errors="replace").strip()[:300]
        model = p.ErrorModel(text or f"HTTP {response.status}", "", response.status)
    # The HTTP status decides, whatever code the body claims (a proxy may wrap an answer).
    message = f"{what}: {model.message}"
    return p.error_from_model(p.ErrorModel(message, model.type, response.status), context)
