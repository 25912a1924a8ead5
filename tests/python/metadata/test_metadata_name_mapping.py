"""Name mappings (spec: Column Projection, Appendix C Name Mapping Serialization)."""

from __future__ import annotations

import json

import pytest
from frazil import MappedField, NameMapping
from frazil.errors import InvalidMetadataError

SPEC_EXAMPLE = """
[ { "field-id": 1, "names": ["id", "record_id"] },
   { "field-id": 2, "names": ["data"] },
   { "field-id": 3, "names": ["location"], "fields": [
       { "field-id": 4, "names": ["latitude", "lat"] },
       { "field-id": 5, "names": ["longitude", "long"] }
     ] } ]
"""


def test_spec_example() -> None:
    mapping = NameMapping.from_json(SPEC_EXAMPLE)
    assert mapping.field_id(["record_id"]) == 1
    assert mapping.field_id(["location", "lat"]) == 4
    assert mapping.field_id(["location", "longitude"]) == 5
    assert mapping.find("location", "altitude") is None
    assert json.loads(mapping.to_json()) == json.loads(SPEC_EXAMPLE)


def test_dotted_names_are_literal() -> None:
    mapping = NameMapping(
        (MappedField(("a.b",), 7), MappedField(("a",), 8, (MappedField(("b",), 9),)))
    )
    assert mapping.field_id(["a.b"]) == 7
    assert mapping.field_id(["a", "b"]) == 9


def test_fields_without_ids_or_names() -> None:
    mapping = NameMapping.from_json('[{"names": ["only_in_files"]}, {"field-id": 3, "names": []}]')
    assert mapping.field_id(["only_in_files"]) is None
    assert json.loads(mapping.to_json()) == [
        {"names": ["only_in_files"]},
        {"field-id": 3, "names": []},
    ]
    # The spec's table spells the key field_id; accept it on read.
    assert NameMapping.from_json('[{"field_id": 4, "names": ["x"]}]').field_id(["x"]) == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"names": []}', "non-array"),
        ('[{"field-id": 1, "names": ["a"]}, {"field-id": 2, "names": ["a"]}]', "mapped twice"),
        ('[{"field-id": "1", "names": ["a"]}]', "must be a JSON int"),
        ('[{"field-id": 1, "names": "a"}]', "non-array"),
        ("[", "invalid JSON"),
    ],
)
def test_bad_mappings_are_refused(text: str, message: str) -> None:
    with pytest.raises(InvalidMetadataError, match=message):
        NameMapping.from_json(text)
