"""Shared fixtures of the table update and evolution tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from frazil import Schema, TableMetadata
from table_helpers import UUID, sample_schema


@pytest.fixture
def make_metadata() -> Callable[..., TableMetadata]:
    def make(
        format_version: int = 2, schema: Schema | None = None, **kwargs: object
    ) -> TableMetadata:
        return TableMetadata.new(
            schema if schema is not None else sample_schema(),
            "file:///tmp/warehouse/t",
            format_version=format_version,
            table_uuid=UUID,
            last_updated_ms=1_000,
            **kwargs,  # type: ignore[arg-type]
        )

    return make


@pytest.fixture
def v2(make_metadata: Callable[..., TableMetadata]) -> TableMetadata:
    return make_metadata(2)


@pytest.fixture
def v3(make_metadata: Callable[..., TableMetadata]) -> TableMetadata:
    return make_metadata(3)


@pytest.fixture
def v1(make_metadata: Callable[..., TableMetadata]) -> TableMetadata:
    return make_metadata(1)
