"""frazil.catalog.rest.protocol: namespace encoding, routes, the error model both ways and the
JSON bodies (round trips, and bad fields named)."""

from __future__ import annotations

from urllib.parse import quote_plus

import pytest
from frazil import errors
from frazil.catalog.rest import protocol as p
from frazil.errors import InvalidMetadataError, ValidationError
from frazil.schema import Schema
from frazil.table.requirements import AssertCreate, AssertRefSnapshotId, AssertTableUUID
from frazil.table.updates import RemoveProperties, SetProperties
from hypothesis import given
from hypothesis import strategies as st
from rest_helpers import SCHEMA

# Any text but the unit separator, which splits levels.
level = st.text(
    st.characters(blacklist_characters="\x1f", blacklist_categories=("Cs",)), min_size=1
)
namespaces = st.lists(level, min_size=1, max_size=4).map(tuple)


@given(namespaces)
def test_namespace_path_round_trip(namespace: tuple[str, ...]) -> None:
    segment = p.encode_namespace(namespace)
    assert "/" not in segment and "\x1f" not in segment
    assert p.decode_namespace(segment) == namespace


@given(namespaces)
def test_java_encoded_namespaces_decode(namespace: tuple[str, ...]) -> None:
    # Java's RESTUtil.encodeNamespace: URLEncoder (a space as '+'), levels joined by %1F.
    java = "%1F".join(quote_plus(level, safe="") for level in namespace)
    assert p.decode_namespace(java) == namespace


@given(namespaces)
def test_parent_parameter_round_trip(namespace: tuple[str, ...]) -> None:
    assert p.namespace_from_param(p.namespace_param(namespace)) == namespace
    assert p.namespace_from_param("") == ()


def test_route_paths() -> None:
    assert p.route_path(p.TABLE, None, namespace=("a", "b c"), table="t/1") == (
        "/v1/namespaces/a%1Fb%20c/tables/t%2F1"
    )
    assert p.route_path(p.PLAN_ID, "cat", namespace=("a",), table="t", plan_id="x y") == (
        "/v1/cat/namespaces/a/tables/t/plan/x%20y"
    )
    assert p.route_path(p.CONFIG) == "/v1/config"
    with pytest.raises(ValidationError, match="needs a value"):
        p.route_path(p.TABLE, namespace=("a",))
    assert str(p.UPDATE_TABLE) == "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"
    assert p.Endpoint.parse("get /v1/{prefix}/namespaces") == p.LIST_NAMESPACES
    with pytest.raises(InvalidMetadataError, match="one space"):
        p.Endpoint.parse("GET  /v1/x")
    assert set(p.DEFAULT_ENDPOINTS) <= set(p.ALL_ENDPOINTS)
    assert len(set(p.ALL_ENDPOINTS)) == len(p.ALL_ENDPOINTS)


# Each frazil error, the (type, status) it is sent as, and what a client raises back.
ROUND_TRIPS = [
    (errors.NoSuchTableError, "NoSuchTableException", 404, "table"),
    (errors.NoSuchViewError, "NoSuchViewException", 404, "view"),
    (errors.NoSuchNamespaceError, "NoSuchNamespaceException", 404, "table"),
    (errors.NoSuchPlanIdError, "NoSuchPlanIdException", 404, "plan"),
    (errors.NoSuchPlanTaskError, "NoSuchPlanTaskException", 404, "plan"),
    (errors.TableAlreadyExistsError, "AlreadyExistsException", 409, "table"),
    (errors.NamespaceAlreadyExistsError, "AlreadyExistsException", 409, "namespace"),
    (errors.ViewAlreadyExistsError, "AlreadyExistsException", 409, "view"),
    (errors.NamespaceNotEmptyError, "NamespaceNotEmptyException", 409, "namespace"),
    (errors.CommitFailedError, "CommitFailedException", 409, "commit"),
    (errors.CommitStateUnknownError, "CommitStateUnknownException", 500, "default"),
    (errors.CommitValidationError, "ValidationException", 400, "commit"),
    (errors.NotAuthorizedError, "NotAuthorizedException", 401, "default"),
    (errors.ForbiddenError, "ForbiddenException", 403, "default"),
    (errors.UnsupportedOperationError, "UnsupportedOperationException", 406, "default"),
    (errors.ServiceUnavailableError, "ServiceUnavailableException", 503, "default"),
    (errors.BadRequestError, "BadRequestException", 400, "default"),
    (errors.ServiceFailureError, "ServiceFailureException", 500, "default"),
]


@pytest.mark.parametrize(("cls", "type_name", "code", "context"), ROUND_TRIPS)
@given(message=st.text(min_size=1))
def test_error_model_round_trip(
    cls: type[Exception], type_name: str, code: int, context: p.ErrorContext, message: str
) -> None:
    model = p.error_model(cls(message))
    assert (model.type, model.code, model.message) == (type_name, code, message)
    back = p.ErrorModel.from_json(model.to_json())
    assert back == model
    error = p.error_from_model(back, context)
    assert isinstance(error, cls), (error, cls)
    assert message in str(error)


def test_error_contexts() -> None:
    def back(type_name: str, code: int, context: p.ErrorContext) -> Exception:
        return p.error_from_model(p.ErrorModel("m", type_name, code), context)

    # In a commit, any 5xx leaves the outcome unknown, whatever the type.
    for code in (500, 502, 503, 504):
        assert isinstance(
            back("InternalServerError", code, "commit"), errors.CommitStateUnknownError
        )
    assert isinstance(back("Whatever", 409, "commit"), errors.CommitFailedError)
    assert isinstance(back("Whatever", 409, "drop-namespace"), errors.NamespaceNotEmptyError)
    assert isinstance(back("Whatever", 404, "view"), errors.NoSuchViewError)
    assert isinstance(back("Whatever", 404, "create-table"), errors.NoSuchNamespaceError)
    assert isinstance(back("Whatever", 422, "default"), errors.BadRequestError)
    assert isinstance(back("InternalServerError", 500, "table"), errors.ServiceFailureError)
    assert isinstance(back("Whatever", 419, "table"), errors.NotAuthorizedError)
    # Outside the table: a Python error is a 500 with its message.
    model = p.error_model(RuntimeError("boom"))
    assert (model.type, model.code, model.message) == ("InternalServerError", 500, "boom")
    assert p.error_model(errors.UnsafeNameError("bad")).code == 400
    with pytest.raises(InvalidMetadataError, match="'code'"):
        p.ErrorModel.from_json({"error": {"message": "m", "type": "t"}})


def test_body_round_trips() -> None:
    schema = Schema.from_json(SCHEMA)
    bodies = [
        p.ConfigResponse({"a": "1"}, {"prefix": "x"}, (p.LIST_TABLES,)),
        p.CreateNamespaceRequest(("a", "b"), {"k": "v"}),
        p.NamespaceResponse(("a",), None),
        p.ListNamespacesResponse((("a",), ("b", "c")), "tok"),
        p.UpdateNamespacePropertiesRequest(("x",), {"y": "1"}),
        p.UpdateNamespacePropertiesResponse(("y",), ("x",), ()),
        p.ListTablesResponse((("a", "t"),), None),
        p.CreateTableRequest("t", schema, "/w/t", None, None, True, {"k": "v"}),
        p.CommitTableRequest(
            (AssertTableUUID("u"), AssertRefSnapshotId("main", None)),
            (SetProperties({"a": "b"}), RemoveProperties(("c",))),
            ("db", "t"),
        ),
        p.CommitTransactionRequest((p.CommitTableRequest((AssertCreate(),), (), ("a", "t")),)),
        p.RegisterTableRequest("t", "/m.json", True),
        p.RenameTableRequest(("a", "t"), ("b", "u")),
        p.PlanTableScanRequest(snapshot_id=5, select=("id",), filter=True),
        p.FetchScanTasksRequest("x.1"),
        p.OAuthTokenResponse("tok", "bearer", 60),
        p.OAuthError("invalid_client", "nope"),
    ]
    for body in bodies:
        assert type(body).from_json(body.to_json()) == body, body  # type: ignore[attr-defined]


def test_bad_fields_are_named() -> None:
    with pytest.raises(InvalidMetadataError, match="'name'"):
        p.CreateTableRequest.from_json({"schema": SCHEMA})
    with pytest.raises(InvalidMetadataError, match="'stage-create' must be a JSON boolean"):
        p.CreateTableRequest.from_json({"name": "t", "schema": SCHEMA, "stage-create": "yes"})
    with pytest.raises(InvalidMetadataError, match="'source'"):
        p.RenameTableRequest.from_json({"destination": {"namespace": [], "name": "x"}})
    with pytest.raises(InvalidMetadataError, match="'namespace'"):
        p.identifier_from_json({"name": "x"})
    with pytest.raises(ValidationError, match="changes no table"):
        p.CommitTransactionRequest.from_json({"table-changes": []})
    with pytest.raises(InvalidMetadataError, match="unknown view requirement"):
        p.CommitViewRequest.from_json({"requirements": [{"type": "assert-create"}], "updates": []})
    with pytest.raises(InvalidMetadataError, match="delete file reference 3"):
        p.ScanTasks.from_json(
            {"file-scan-tasks": [{"data-file": {}, "delete-file-references": [3]}]}
        )
    with pytest.raises(errors.BadRequestError, match="malformed x"):
        p.read_json(b"{", "x")


def test_oauth_forms() -> None:
    request = p.OAuthTokenRequest("client_credentials", "id", "se cret&=", "catalog")
    assert p.OAuthTokenRequest.from_form(request.to_form()) == request
    with pytest.raises(errors.BadRequestError, match="grant_type"):
        p.OAuthTokenRequest.from_form("client_id=a")
    with pytest.raises(errors.BadRequestError, match="repeated"):
        p.OAuthTokenRequest.from_form("grant_type=client_credentials&grant_type=x")
    with pytest.raises(errors.BadRequestError, match="subject_token"):
        p.OAuthTokenRequest.from_form(f"grant_type={p.TOKEN_EXCHANGE}")
    assert isinstance(p.OAuthError("invalid_client").to_error(), errors.NotAuthorizedError)
    assert isinstance(p.OAuthError("invalid_grant").to_error(), errors.BadRequestError)
