"""Schema evolution with UpdateSchema: every change and every refusal of the spec's rules."""

from __future__ import annotations

import pytest
from frazil import Schema, TableMetadata
from frazil.errors import InvalidSchemaError, InvalidUpdateError
from frazil.table import AddSchema, SetCurrentSchema, UpdateSchema
from frazil.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    VariantType,
    optional,
    required,
)
from table_helpers import sample_schema


def names(schema: Schema) -> list[str]:
    return [f.name for f in schema.fields]


def test_add_columns_get_fresh_ids_in_java_order(v2: TableMetadata) -> None:
    with UpdateSchema(v2) as update:
        update.add_column("a", StringType(), doc="first")
        nested = StructType(
            (
                optional(1, "x", IntegerType()),
                optional(2, "m", MapType(3, StringType(), 4, ListType(5, LongType()))),
            )
        )
        update.add_column("b", nested)
    schema = update.metadata.schema()
    assert schema.schema_id == 1
    a, b = schema.field("a"), schema.field("b")
    assert (a.field_id, a.doc, a.required) == (14, "first", False)
    # A struct's fields get ids first, then their types: x=16, m=17, key=18, value=19, element=20.
    assert b.field_id == 15
    assert schema.find_field_id("b.x") == 16 and schema.find_field_id("b.m") == 17
    m = schema.field("b.m").field_type
    assert isinstance(m, MapType) and (m.key_id, m.value_id) == (18, 19)
    assert isinstance(m.value_type, ListType) and m.value_type.element_id == 20
    assert update.metadata.last_column_id == 20
    assert update.metadata.schemas[0] == v2.schema()


def test_add_column_type_strings(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2).add_column("d", "decimal(9, 2)").apply()
    assert schema.field("d").field_type == DecimalType(9, 2)


@pytest.mark.parametrize(
    "path, parent, expected_name",
    [
        ("location.alt", "location", "location.alt"),
        (("location", "alt"), "location", "location.alt"),
        ("points.z", "points", "points.element.z"),
        ("points.element.z", "points", "points.element.z"),
        (("points", "element", "z"), "points", "points.element.z"),
    ],
)
def test_add_nested_columns(
    v2: TableMetadata, path: object, parent: str, expected_name: str
) -> None:
    schema = UpdateSchema(v2).add_column(path, DoubleType()).apply()  # type: ignore[arg-type]
    assert schema.find_field_id(expected_name) == 14
    assert schema.find_column_name(14) == expected_name


def test_add_into_map_values(make_metadata: object) -> None:
    schema = Schema(
        optional(
            1, "m", MapType(2, StringType(), 3, StructType((optional(4, "a", IntegerType()),)))
        )
    )
    metadata = make_metadata(2, schema)  # type: ignore[operator]
    new = UpdateSchema(metadata).add_column("m.b", LongType()).apply()
    assert new.find_column_name(5) == "m.value.b"


def test_tuple_paths_allow_dots_in_names(v2: TableMetadata) -> None:
    new = UpdateSchema(v2).add_column(("a.b",), LongType()).apply()
    assert new.fields[-1].name == "a.b"
    renamed = UpdateSchema(v2).rename_column(("location", "lat"), "latitude").apply()
    assert renamed.find_field_id("location.latitude") == 5


@pytest.mark.parametrize(
    "path, message",
    [
        ("data", "name already exists"),
        ("location.lat", "name already exists"),
        ("nope.x", "parent 'nope' not found"),
        ("data.x", "non-struct column 'data'"),
        ("props.x", "non-struct column 'props'"),
        ("", "cannot be empty"),
    ],
)
def test_add_column_refusals(v2: TableMetadata, path: str, message: str) -> None:
    with pytest.raises(InvalidUpdateError, match=message):
        UpdateSchema(v2).add_column(path, LongType())


def test_add_twice_is_refused(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="twice"):
        UpdateSchema(v2).add_column("n", LongType()).add_column("n", StringType())


def test_add_to_a_deleted_struct_is_refused(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="being deleted"):
        UpdateSchema(v2).delete_column("location").add_column("location.alt", LongType())


def test_delete_then_add_the_same_name_gets_a_new_id(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2).delete_column("data").add_column("data", LongType()).apply()
    assert schema.field("data").field_id == 14 and schema.field("data").field_type == LongType()


def test_required_columns_need_a_default(v2: TableMetadata, v3: TableMetadata) -> None:
    with pytest.raises(
        InvalidUpdateError, match="cannot add required column 'r' without a default"
    ):
        UpdateSchema(v3).add_column("r", LongType(), required=True)
    with pytest.raises(InvalidUpdateError, match="default values need format v3"):
        UpdateSchema(v2).add_column("r", LongType(), required=True)
    with pytest.raises(InvalidUpdateError, match="need format v3"):
        UpdateSchema(v2).add_column("r", LongType(), default=1)
    forced = UpdateSchema(v2, allow_incompatible_changes=True).add_column(
        "r", LongType(), required=True
    )
    assert forced.apply().field("r").required
    with UpdateSchema(v3) as update:
        update.add_column("r", LongType(), required=True, default=7)
    field = update.metadata.schema().field("r")
    assert field.required and field.initial_default == 7 and field.write_default == 7


@pytest.mark.parametrize(
    "field_type, default",
    [
        (LongType(), "7"),
        (IntegerType(), 2**31),
        (IntegerType(), True),
        (StringType(), 3),
        (DecimalType(9, 2), "1.234"),
        (DoubleType(), "1.5"),
        ("date", "2024-13"),
        ("uuid", "not-a-uuid"),
        ("fixed[2]", "00"),
        ("timestamptz", "2024-01-01T00:00:00"),
        (ListType(1, LongType()), []),
        (StructType((optional(1, "x", LongType()),)), {}),
    ],
)
def test_bad_defaults_are_refused(v3: TableMetadata, field_type: object, default: object) -> None:
    with pytest.raises(InvalidUpdateError, match="default value"):
        UpdateSchema(v3).add_column("c", field_type, default=default)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "field_type, default",
    [
        (LongType(), -5),
        (DoubleType(), 1.5),
        (DecimalType(9, 2), "-12.34"),
        ("boolean", False),
        ("date", "2024-02-29"),
        ("time", "12:34:56.123456"),
        ("timestamp", "2024-01-01T00:00:00.000001"),
        ("timestamptz", "2024-01-01T00:00:00+00:00"),
        ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        ("binary", "0aff"),
        ("fixed[2]", "0aff"),
    ],
)
def test_good_defaults_are_kept(v3: TableMetadata, field_type: object, default: object) -> None:
    with UpdateSchema(v3) as update:
        update.add_column("c", field_type, default=default)  # type: ignore[arg-type]
    metadata = update.metadata
    assert metadata.schema().field("c").initial_default == default
    assert TableMetadata.from_json(metadata.to_json()) == metadata


def test_write_default_changes_but_initial_default_stays(
    v2: TableMetadata, v3: TableMetadata
) -> None:
    with UpdateSchema(v3) as first:
        first.add_column("c", LongType(), default=1)
    with UpdateSchema(first.metadata) as second:
        second.update_column("c", write_default=2)
    field = second.metadata.schema().field("c")
    assert (field.initial_default, field.write_default) == (1, 2)
    with pytest.raises(InvalidUpdateError, match="default values need format v3"):
        UpdateSchema(v2).update_column("id", write_default=3)
    with pytest.raises(InvalidUpdateError, match="default value"):
        UpdateSchema(second.metadata).update_column("c", write_default="x")


def test_delete_columns(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2).delete_column("data").delete_column("location.lat").apply()
    assert names(schema) == ["id", "ts", "location", "points", "props"]
    assert schema.find_field("location.lat") is None and schema.find_field("location.long")


@pytest.mark.parametrize(
    "path, message",
    [
        ("nope", "cannot delete missing column 'nope'"),
        ("points.element", "cannot delete list element"),
        ("props.key", "cannot delete map key or value"),
        ("props.value", "cannot delete map key or value"),
    ],
)
def test_delete_refusals(v2: TableMetadata, path: str, message: str) -> None:
    with pytest.raises(InvalidUpdateError, match=message):
        UpdateSchema(v2).delete_column(path)


def test_deleting_an_identifier_field_is_refused(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="identifier field 'id' would be deleted"):
        UpdateSchema(v2).delete_column("id").apply()
    # ... unless the identifier fields change in the same update.
    schema = UpdateSchema(v2).delete_column("id").set_identifier_fields().apply()
    assert schema.find_field("id") is None and schema.identifier_field_ids == ()


def test_deleting_the_parent_of_an_identifier_field_is_refused(make_metadata: object) -> None:
    schema = Schema(
        required(1, "s", StructType((required(2, "k", LongType()),))),
        optional(3, "d", StringType()),
        identifier_field_ids=[2],
    )
    metadata = make_metadata(2, schema)  # type: ignore[operator]
    with pytest.raises(InvalidUpdateError, match=r"cannot delete 's': identifier field 's\.k'"):
        UpdateSchema(metadata).delete_column("s").apply()


def test_conflicting_changes_to_one_column_are_refused(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="it is being deleted"):
        UpdateSchema(v2).delete_column("data").rename_column("data", "x")
    with pytest.raises(InvalidUpdateError, match="it is being deleted"):
        UpdateSchema(v2).delete_column("data").update_column("data", doc="d")
    with pytest.raises(InvalidUpdateError, match="other changes"):
        UpdateSchema(v2).rename_column("data", "x").delete_column("data")
    with pytest.raises(InvalidUpdateError, match="columns are being added to it"):
        UpdateSchema(v2).add_column("location.alt", LongType()).delete_column("location")


def test_rename_columns(v2: TableMetadata) -> None:
    with UpdateSchema(v2) as update:
        update.rename_column("id", "key")
        update.rename_column("points.x", "px")
        update.rename_column("location", "loc")
    schema = update.metadata.schema()
    assert schema.field("key").field_id == 1
    assert schema.find_field_id("points.element.px") == 9
    assert schema.find_field_id("loc.lat") == 5
    # The identifier field follows its id, whatever its name.
    assert schema.identifier_field_names == ("key",)


def test_rename_refusals(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="missing column 'nope'"):
        UpdateSchema(v2).rename_column("nope", "x")
    with pytest.raises(InvalidUpdateError, match="two fields named 'ts'"):
        UpdateSchema(v2).rename_column("data", "ts").apply()
    with pytest.raises(InvalidUpdateError, match="cannot rename map keys"):
        UpdateSchema(v2).rename_column("props.key", "k")
    with pytest.raises(InvalidUpdateError, match="cannot rename"):
        UpdateSchema(v2).rename_column("data", "")


@pytest.mark.parametrize(
    "column, old, new",
    [
        ("i", IntegerType(), LongType()),
        ("f", FloatType(), DoubleType()),
        ("d", DecimalType(9, 2), DecimalType(18, 2)),
    ],
)
def test_promotions(make_metadata: object, column: str, old: object, new: object) -> None:
    schema = Schema(optional(1, column, old))  # type: ignore[arg-type]
    metadata = make_metadata(2, schema)  # type: ignore[operator]
    with UpdateSchema(metadata) as update:
        update.update_column(column, field_type=new)  # type: ignore[arg-type]
    assert update.metadata.schema().field(column).field_type == new
    assert update.metadata.schema().field(column).field_id == 1


@pytest.mark.parametrize(
    "column, new, message",
    [
        ("id", IntegerType(), "long -> int is not an allowed promotion"),
        ("data", LongType(), "string -> long"),
        ("location.lat", DecimalType(9, 2), "float -> decimal"),
        ("location", StringType(), "nested types never change kind"),
        ("data", StructType((optional(20, "x", LongType()),)), "cannot become a nested type"),
        ("points", ListType(20, LongType()), "nested types never change kind"),
        ("props.key", LongType(), "cannot update map keys"),
    ],
)
def test_type_change_refusals(v2: TableMetadata, column: str, new: object, message: str) -> None:
    with pytest.raises(InvalidUpdateError, match=message):
        UpdateSchema(v2).update_column(column, field_type=new)  # type: ignore[arg-type]


def test_decimal_narrowing_and_scale_change_are_refused(make_metadata: object) -> None:
    metadata = make_metadata(2, Schema(optional(1, "d", DecimalType(9, 2))))  # type: ignore[operator]
    for new in (DecimalType(8, 2), DecimalType(10, 3)):
        with pytest.raises(InvalidUpdateError, match="not an allowed promotion"):
            UpdateSchema(metadata).update_column("d", field_type=new)


def test_promote_list_element_and_map_value(make_metadata: object) -> None:
    schema = Schema(
        optional(1, "l", ListType(2, IntegerType(), True)),
        optional(3, "m", MapType(4, StringType(), 5, FloatType(), True)),
    )
    metadata = make_metadata(2, schema)  # type: ignore[operator]
    with UpdateSchema(metadata) as update:
        update.update_column("l.element", field_type=LongType(), required=False)
        update.update_column("m.value", field_type=DoubleType())
    new = update.metadata.schema()
    assert new.field("l").field_type == ListType(2, LongType(), False)
    assert new.field("m").field_type == MapType(4, StringType(), 5, DoubleType(), True)


def test_nullability(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="optional -> required is an incompatible change"):
        UpdateSchema(v2).update_column("data", required=True)
    with pytest.raises(InvalidUpdateError, match="incompatible"):
        UpdateSchema(v2).require_column("data")
    forced = UpdateSchema(v2, allow_incompatible_changes=True).require_column("data").apply()
    assert forced.field("data").required
    optional_id = UpdateSchema(v2).set_identifier_fields().make_column_optional("id").apply()
    assert not optional_id.field("id").required


def test_a_defaulted_added_column_may_be_made_required(v3: TableMetadata) -> None:
    schema = (
        UpdateSchema(v3).add_column("c", LongType(), default=0).update_column("c", required=True)
    ).apply()
    assert schema.field("c").required


def test_doc_update(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2).update_column("data", doc="payload").apply()
    assert schema.field("data").doc == "payload"
    cleared = UpdateSchema(v2.replace(schemas=(schema,))).update_column("data", doc=None).apply()
    assert cleared.field("data").doc is None


def test_rename_and_promote_the_same_column_merge(make_metadata: object) -> None:
    metadata = make_metadata(2, Schema(optional(1, "i", IntegerType())))  # type: ignore[operator]
    schema = (
        UpdateSchema(metadata).rename_column("i", "j").update_column("i", field_type="long").apply()
    )
    assert schema.fields == (optional(1, "j", LongType()),)


def test_moves(v2: TableMetadata) -> None:
    schema = (
        UpdateSchema(v2)
        .add_column("n", LongType())
        .move_first("n")
        .move_after("id", "ts")
        .move_before("props", "location")
        .move_first("location.long")
        .apply()
    )
    assert names(schema) == ["n", "data", "ts", "id", "props", "location", "points"]
    location = schema.field("location").field_type
    assert isinstance(location, StructType) and [f.name for f in location.fields] == ["long", "lat"]


def test_move_within_list_element_struct(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2).move_after("points.x", "points.y").apply()
    points = schema.field("points").field_type
    assert isinstance(points, ListType)
    assert isinstance(points.element_type, StructType)
    assert [f.name for f in points.element_type.fields] == ["y", "x"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda u: u.move_first("nope"), "cannot move missing column 'nope'"),
        (lambda u: u.move_before("id", "nope"), "missing column 'nope'"),
        (lambda u: u.move_after("id", "id"), "after itself"),
        (lambda u: u.move_before("id", "location.lat"), "different struct"),
        (lambda u: u.move_after("location.lat", "points.x"), "different struct"),
        (lambda u: u.delete_column("data").move_first("data"), "'data': it is being deleted"),
        (lambda u: u.delete_column("data").move_after("id", "data"), "it is being deleted"),
        (lambda u: u.move_first("data").delete_column("data").apply(), "field 2 is being deleted"),
        (
            lambda u: u.move_after("id", "ts").delete_column("ts").apply(),
            "field 3 is being deleted",
        ),
    ],
)
def test_move_refusals(v2: TableMetadata, call: object, message: str) -> None:
    with pytest.raises(InvalidUpdateError, match=message):
        call(UpdateSchema(v2))  # type: ignore[operator]


def test_identifier_fields(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2, allow_incompatible_changes=True).require_column("data")
    schema.set_identifier_fields("id", "data")
    assert schema.apply().identifier_field_ids == (1, 2)
    with pytest.raises(InvalidUpdateError, match="'nope' an identifier field: not found"):
        UpdateSchema(v2).set_identifier_fields("nope").apply()
    with pytest.raises(InvalidSchemaError, match="must be required"):
        UpdateSchema(v2).set_identifier_fields("data").apply()
    with pytest.raises(InvalidSchemaError, match="cannot be float"):
        UpdateSchema(v2, allow_incompatible_changes=True).require_column(
            "location.lat"
        ).set_identifier_fields(["location.lat"]).apply()
    # A column added in the same update may become an identifier field.
    added = UpdateSchema(v2, allow_incompatible_changes=True).add_column(
        "k", "string", required=True
    )
    assert added.set_identifier_fields("id", "k").apply().identifier_field_names == ("id", "k")


def test_case_insensitive_names(v2: TableMetadata) -> None:
    schema = UpdateSchema(v2, case_sensitive=False).rename_column("DATA", "d").apply()
    assert schema.field("d").field_id == 2
    with pytest.raises(InvalidUpdateError, match="missing column 'DATA'"):
        UpdateSchema(v2).rename_column("DATA", "d")
    with pytest.raises(InvalidUpdateError, match="name already exists"):
        UpdateSchema(v2, case_sensitive=False).add_column("Data", LongType())


def test_union_by_name(v2: TableMetadata) -> None:
    other = Schema(
        optional(1, "id", IntegerType()),  # narrower than long and optional: relaxes nullability
        optional(2, "data", StringType(), doc="new doc"),
        optional(
            3,
            "location",
            StructType((optional(4, "lat", DoubleType()), optional(5, "alt", DoubleType()))),
        ),
        optional(6, "points", ListType(7, StructType((required(8, "z", LongType()),)))),
        optional(9, "extra", StructType((optional(10, "e", LongType()),))),
    )
    new = UpdateSchema(v2).set_identifier_fields().union_by_name(other).apply()
    assert new.field("id").field_type == LongType() and not new.field("id").required
    assert new.field("data").doc == "new doc"
    assert new.field("location.lat").field_type == DoubleType()
    assert new.find_column_name(new.field("location.alt").field_id) == "location.alt"
    assert new.find_field_id("points.element.z") is not None
    # Added columns are optional, even where the other schema has them required.
    assert not new.field("points.element.z").required
    assert new.field("extra").field_id == 16 and new.find_field_id("extra.e") == 17
    assert names(new)[:6] == ["id", "data", "ts", "location", "points", "props"]


def test_union_refusals(v2: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="string -> long"):
        UpdateSchema(v2).union_by_name(Schema(optional(1, "data", LongType())))
    with pytest.raises(InvalidUpdateError, match="different kinds"):
        UpdateSchema(v2).union_by_name(Schema(optional(1, "location", LongType())))
    with pytest.raises(InvalidUpdateError, match="map keys cannot change"):
        UpdateSchema(v2).union_by_name(
            Schema(optional(1, "props", MapType(2, LongType(), 3, IntegerType())))
        )


def test_union_with_itself_changes_nothing(v2: TableMetadata) -> None:
    assert UpdateSchema(v2).union_by_name(v2.schema()).updates() == ()


def test_updates_reuse_an_earlier_schema(v2: TableMetadata) -> None:
    with UpdateSchema(v2) as rename:
        rename.rename_column("data", "payload")
    assert rename.updates()[0] == AddSchema(rename.apply(), 13)
    assert rename.updates()[1] == SetCurrentSchema(-1)
    with UpdateSchema(rename.metadata) as back:
        back.rename_column("payload", "data")
    assert back.updates() == (SetCurrentSchema(0),)
    assert back.metadata.current_schema_id == 0 and len(back.metadata.schemas) == 2


def test_not_committed_yet(v2: TableMetadata) -> None:
    update = UpdateSchema(v2)
    with pytest.raises(Exception, match="not been committed"):
        _ = update.metadata
    with pytest.raises(ValueError), UpdateSchema(v2) as failing:
        failing.add_column("x", LongType())
        raise ValueError("boom")
    with pytest.raises(Exception, match="not been committed"):
        _ = failing.metadata


def test_builder_needs_table_metadata() -> None:
    with pytest.raises(InvalidUpdateError, match="needs a TableMetadata"):
        UpdateSchema(sample_schema())  # type: ignore[arg-type]


def test_nested_field_identity_is_kept() -> None:
    # NestedField equality includes docs and defaults: a doc-only change is a new schema.
    assert optional(1, "a", LongType(), "x") != NestedField(1, "a", LongType(), False, None)


def test_name_mapping_follows_renames_and_additions(v2: TableMetadata) -> None:
    from frazil.name_mapping import DEFAULT_NAME_MAPPING_PROPERTY, NameMapping

    mapping = NameMapping.from_schema(v2.schema())
    metadata = v2.replace(properties={DEFAULT_NAME_MAPPING_PROPERTY: mapping.to_json()})
    with UpdateSchema(metadata) as update:
        update.rename_column("data", "payload")
        update.add_column("location.alt", DoubleType())
        update.add_column("n", StructType((optional(1, "m", LongType()),)))
    new = update.metadata.name_mapping()
    assert new is not None
    # Files written before the rename still say "data".
    assert new.find("data") == new.find("payload")
    found = new.find("payload")
    assert found is not None and found.names == ("data", "payload") and found.field_id == 2
    assert new.field_id(["location", "alt"]) == 14
    assert new.field_id(["n"]) == 15 and new.field_id(["n", "m"]) == 16
    # A dropped column's name given to a new column moves to the new column's mapping.
    with UpdateSchema(update.metadata) as again:
        again.delete_column("payload").add_column("data", StringType())
    remapped = again.metadata.name_mapping()
    assert remapped is not None and remapped.field_id(["data"]) == 17
    old = next(f for f in remapped.fields if f.field_id == 2)
    assert old.names == ("payload",)
    # Without a mapping property nothing is added.
    assert all(
        u.action != "set-properties" for u in UpdateSchema(v2).add_column("z", "int").updates()
    )


def test_v3_types_need_v3(v2: TableMetadata, v3: TableMetadata) -> None:
    with pytest.raises(InvalidUpdateError, match="type timestamp_ns needs format v3"):
        UpdateSchema(v2).add_column("t", "timestamp_ns")
    with pytest.raises(InvalidUpdateError, match="type variant needs format v3"):
        UpdateSchema(v2).add_column(
            "l", ListType(1, StructType((optional(2, "v", VariantType()),)))
        )
    assert UpdateSchema(v3).add_column("t", "timestamp_ns").commit_to().schema().field("t")


def test_reserved_field_ids_are_never_assigned(make_metadata: object) -> None:
    from frazil.schema import MAX_FIELD_ID

    schema = Schema(optional(MAX_FIELD_ID, "last", LongType()))
    metadata = make_metadata(2, schema)  # type: ignore[operator]
    with pytest.raises(InvalidSchemaError, match="reserved"):
        UpdateSchema(metadata).add_column("one_more", LongType()).apply()


def test_column_properties_follow_renames_and_deletes(v2: TableMetadata) -> None:
    properties = {
        "write.metadata.metrics.column.data": "full",
        "write.parquet.bloom-filter-enabled.column.location.lat": "true",
        "write.parquet.bloom-filter-fpp.column.location.lat": "0.05",
        "write.parquet.stats-enabled.column.ts": "false",
        "write.metadata.metrics.column.id": "counts",
        "other": "kept",
    }
    metadata = v2.replace(properties=properties)
    with UpdateSchema(metadata) as update:
        update.rename_column("data", "payload")
        update.rename_column("location", "loc")
        update.delete_column("ts")
    assert update.metadata.properties == {
        "write.metadata.metrics.column.payload": "full",
        "write.parquet.bloom-filter-enabled.column.loc.lat": "true",
        "write.parquet.bloom-filter-fpp.column.loc.lat": "0.05",
        "write.metadata.metrics.column.id": "counts",
        "other": "kept",
    }
    # Deleting a struct drops the properties of the columns inside it.
    nested = v2.replace(
        properties={"write.parquet.bloom-filter-enabled.column.location.lat": "true"}
    )
    assert UpdateSchema(nested).delete_column("location").commit_to().properties == {}
