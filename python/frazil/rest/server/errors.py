"""Every failure of a request as the OpenAPI's error body (``ErrorModel``), with the status
:func:`frazil.catalog.rest.protocol.error_model` gives its error: a client's mistake is a
4xx naming it, never a 5xx or a stack. A server-side failure (5xx) is logged with its
traceback on the ``frazil.rest.server`` logger; the body has its message, and the stack only
when the server runs with ``debug``."""

from __future__ import annotations

import logging
import traceback

from frazil.catalog.rest.protocol import ErrorModel, error_model
from frazil.rest.server._http import Reply, json_reply

__all__ = ["LOG", "error_reply", "model_reply"]

LOG = logging.getLogger("frazil.rest.server")


def model_reply(model: ErrorModel, headers: dict[str, str] | None = None) -> Reply:
    return json_reply(model.to_json(), model.code, headers)


def error_reply(error: BaseException, where: str, *, debug: bool = False) -> Reply:
    """The reply to ``error``, raised while serving ``where`` (``"GET /v1/..."``)."""
    model = error_model(error)
    headers: dict[str, str] = {}
    if model.code >= 500:
        LOG.error("%s failed: %s", where, model.message, exc_info=error)
        if debug:
            stack = traceback.format_exception(type(error), error, error.__traceback__)
            model = ErrorModel(model.message, model.type, model.code, tuple(stack))
    elif model.code == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="frazil"'
    return model_reply(model, headers)
