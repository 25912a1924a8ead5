"""Fixtures for the metadata tests: fresh copies of the hand-written files in data/."""

from __future__ import annotations

from typing import Any

import pytest
from metadata_files import load


@pytest.fixture
def v1_old() -> dict[str, Any]:
    return load("v1-old-writer.metadata.json")


@pytest.fixture
def v2_java() -> dict[str, Any]:
    return load("v2-java.metadata.json")


@pytest.fixture
def v3_java() -> dict[str, Any]:
    return load("v3-java.metadata.json")
