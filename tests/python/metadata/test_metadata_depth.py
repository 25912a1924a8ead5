"""JSON nested to any depth in a metadata file is an InvalidMetadataError naming the file, never
a RecursionError (issue 22: at 200 levels the error was proper, at thousands a bare
RecursionError without the file's name).

Depth goes where a damaged or hostile file could put it: an unknown key (kept as an extra), a
schema's nested types (the model's parsers recurse per level), a view's schema, and the name
mapping property. Files are built as text, so no JSON encoder has to recurse either."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from frazil import ViewMetadata
from frazil.errors import InvalidMetadataError
from frazil.metadata import TableMetadata, read_metadata
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metadata_files import load

PLACEHOLDER = "__DEEP__"
# Depths around and far past Python's recursion limit (1,000 by default), and small ones
# that parse.
depths = st.one_of(
    st.sampled_from([1, 2, 50, 200, 900, 1_000, 3_000, 100_000]), st.integers(1, 5_000)
)


def _arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def _list_types(depth: int, first_id: int) -> str:
    """A type of ``depth`` nested lists of int, element ids from ``first_id``."""
    head = "".join(
        f'{{"type": "list", "element-id": {first_id + i}, "element-required": false, "element": '
        for i in range(depth)
    )
    return head + '"int"' + "}" * depth


def _with(document: dict[str, Any], deep: str) -> str:
    text = json.dumps(document)
    assert text.count(f'"{PLACEHOLDER}"') == 1
    return text.replace(f'"{PLACEHOLDER}"', deep)


def _table_with_deep_extra(depth: int) -> str:
    document = load("v2-java.metadata.json")
    document["x-unknown"] = PLACEHOLDER
    return _with(document, _arrays(depth))


def _table_with_deep_type(depth: int) -> str:
    document = load("v2-java.metadata.json")
    first_id = 100
    document["last-column-id"] = first_id + depth
    document["schemas"][-1]["fields"].append(
        {"id": 99, "name": "deep", "required": False, "type": PLACEHOLDER}
    )
    return _with(document, _list_types(depth, first_id))


def _view_with_deep_type(depth: int) -> str:
    document = load("view-java.metadata.json")
    document["schemas"][-1]["fields"].append(
        {"id": 99, "name": "deep", "required": False, "type": PLACEHOLDER}
    )
    return _with(document, _list_types(depth, 100))


def _read_or_refuse(path: Path) -> None:
    """Reads a table metadata file: either it parses or the error is InvalidMetadataError
    naming it."""
    try:
        read_metadata(path)
    except InvalidMetadataError as error:
        assert str(error).startswith(f"{path}: "), error


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(depth=depths)
def test_table_metadata_nested_to_any_depth(tmp_path: Path, depth: int) -> None:
    for build in (_table_with_deep_extra, _table_with_deep_type):
        path = tmp_path / f"v{depth}.metadata.json"
        path.write_text(build(depth))
        _read_or_refuse(path)
        text = path.read_text()
        try:
            TableMetadata.from_json(text, metadata_location="s3://b/t/metadata/v9.metadata.json")
        except InvalidMetadataError as error:
            assert str(error).startswith("s3://b/t/metadata/v9.metadata.json: "), error


@pytest.mark.parametrize("depth", [3_000, 100_000])
def test_thousands_deep_is_refused_naming_the_file(tmp_path: Path, depth: int) -> None:
    for name, text in (
        ("extra", _table_with_deep_extra(depth)),
        ("types", _table_with_deep_type(depth)),
    ):
        path = tmp_path / f"{name}.metadata.json"
        path.write_text(text)
        with pytest.raises(InvalidMetadataError, match=rf"^{path}: .*nested too deeply"):
            read_metadata(path)
    # Shallow, the same shapes parse: the extra is kept, the nested type read.
    path = tmp_path / "shallow.metadata.json"
    path.write_text(_table_with_deep_type(20))
    assert read_metadata(path).schema().find_field("deep") is not None


@settings(max_examples=15, deadline=None)
@given(depth=depths)
def test_view_metadata_nested_to_any_depth(depth: int) -> None:
    location = "s3://b/v/metadata/00001-x.metadata.json"
    try:
        ViewMetadata.from_json(_view_with_deep_type(depth), location)
    except InvalidMetadataError as error:
        assert str(error).startswith(f"{location}: "), error
    if depth >= 3_000:
        with pytest.raises(InvalidMetadataError, match=rf"^{location}: .*nested too deeply"):
            ViewMetadata.from_json(_view_with_deep_type(depth), location)


def test_view_metadata_syntax_error_names_the_file() -> None:
    location = "s3://b/v/metadata/00001-x.metadata.json"
    with pytest.raises(InvalidMetadataError, match=rf"^{location}: cannot parse view metadata"):
        ViewMetadata.from_json(b'{"format-version": 1,', location)


@pytest.mark.parametrize("depth", [3_000, 100_000])
def test_deep_name_mapping_property(depth: int) -> None:
    document = load("v2-java.metadata.json")
    field = '{"names": ["x"], "field-id": 1, "fields": ['
    mapping = "[" + field * depth + "]}" * depth + "]"
    document.setdefault("properties", {})["schema.name-mapping.default"] = mapping
    metadata = TableMetadata.from_json(json.dumps(document))
    with pytest.raises(InvalidMetadataError, match=r"name mapping.*nested too deeply"):
        metadata.name_mapping()
