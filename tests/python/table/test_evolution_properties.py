"""Property tests: random sequences of schema and partition spec evolution keep the spec's
invariants. Each step either commits or is refused with a frazil error (never anything else);
after each commit the field ids stay unique and monotonic (no reuse, last-column-id and
last-partition-id never decrease), a field id keeps its kind and only widens its type, the
metadata validates and round-trips through JSON."""

from __future__ import annotations

import json
from typing import Any

from frazil import TableMetadata
from frazil.errors import FrazilError
from frazil.table import (
    UpdateSchema,
    UpdateSpec,
    apply_updates,
    requirement_from_json,
    update_from_json,
    validate_requirements,
)
from frazil.table._builder import EvolutionBuilder
from frazil.table.update_schema import is_promotion_allowed
from frazil.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampType,
    optional,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_helpers import UUID, sample_schema

PRIMITIVES: list[IcebergType] = [
    IntegerType(),
    LongType(),
    FloatType(),
    DoubleType(),
    DecimalType(9, 2),
    StringType(),
    TimestampType(),
]
WIDER: dict[type, list[IcebergType]] = {
    IntegerType: [LongType()],
    FloatType: [DoubleType()],
    DecimalType: [DecimalType(12, 2), DecimalType(20, 2)],
}
TRANSFORMS = ["identity", "bucket[4]", "bucket[16]", "truncate[3]", "year", "day", "hour", "void"]


def new_types() -> st.SearchStrategy[IcebergType]:
    primitive = st.sampled_from(PRIMITIVES)
    return st.one_of(
        primitive,
        primitive.map(lambda t: StructType((optional(1, "a", t), optional(2, "b", LongType())))),
        primitive.map(lambda t: ListType(1, t)),
        primitive.map(lambda t: MapType(1, StringType(), 2, t)),
    )


def kind(t: IcebergType) -> str:
    return type(t).__name__ if not isinstance(t, PrimitiveType) else "primitive"


def step(metadata: TableMetadata, data: st.DataObject) -> TableMetadata:
    builder = build_step(metadata, data)
    if builder is None:
        return metadata
    committed = builder.commit_to(timestamp_ms=5_000)
    # The same commit through the REST JSON of its updates and requirements, as a catalog
    # server would receive it, gives the same metadata.
    updates, requirements = builder.updates_and_requirements()
    decoded = [update_from_json(json.loads(json.dumps(u.to_json()))) for u in updates]
    checks = [requirement_from_json(json.loads(json.dumps(r.to_json()))) for r in requirements]
    validate_requirements(checks, metadata)
    assert apply_updates(metadata, decoded, timestamp_ms=5_000) == committed
    return committed


def build_step(metadata: TableMetadata, data: st.DataObject) -> EvolutionBuilder[Any] | None:
    schema = metadata.schema()
    columns = [(name, f) for name, f in schema.all_fields()]
    structs = [name for name, f in columns if isinstance(f.field_type, StructType)]
    op = data.draw(
        st.sampled_from(
            [
                "add",
                "add_nested",
                "delete",
                "rename",
                "promote",
                "optional",
                "move",
                "part_add",
                "part_remove",
                "part_rename",
            ]
        )
    )
    fresh = data.draw(st.sampled_from(["a", "b", "c", "x", "y", "zz", "data", "id", "ts"]))
    if op.startswith("part_"):
        update_spec = UpdateSpec(metadata)
        spec = metadata.spec()
        if op == "part_add":
            top = [f.name for f in schema.fields if isinstance(f.field_type, PrimitiveType)]
            if not top:
                return None
            update_spec.add_field(
                data.draw(st.sampled_from(top)), data.draw(st.sampled_from(TRANSFORMS))
            )
        elif not spec.fields:
            return None
        elif op == "part_remove":
            update_spec.remove_field(data.draw(st.sampled_from([f.name for f in spec.fields])))
        else:
            update_spec.rename_field(
                data.draw(st.sampled_from([f.name for f in spec.fields])), fresh
            )
        return update_spec
    update = UpdateSchema(metadata, allow_incompatible_changes=data.draw(st.booleans()))
    name: str = data.draw(st.sampled_from([n for n, _ in columns])) if columns else "id"
    field: NestedField | None = schema.find_field(name)
    if op == "add":
        update.add_column(fresh, data.draw(new_types()))
    elif op == "add_nested":
        if not structs:
            return None
        update.add_column(f"{data.draw(st.sampled_from(structs))}.{fresh}", data.draw(new_types()))
    elif op == "delete":
        update.delete_column(name)
        if data.draw(st.booleans()):
            update.set_identifier_fields()
    elif op == "rename":
        update.rename_column(name, fresh)
    elif op == "promote":
        assert field is not None
        choices: list[IcebergType] = WIDER.get(type(field.field_type), []) + PRIMITIVES
        update.update_column(name, field_type=data.draw(st.sampled_from(choices)))
    elif op == "optional":
        update.update_column(name, required=data.draw(st.booleans()))
    else:
        other = data.draw(st.sampled_from([n for n, _ in columns]))
        update.move_after(name, other) if data.draw(st.booleans()) else update.move_first(name)
    return update


def check_invariants(before: TableMetadata, after: TableMetadata) -> None:
    assert after.last_column_id >= before.last_column_id
    assert after.last_partition_id >= before.last_partition_id
    old_fields: dict[int, NestedField] = {}
    for schema in before.schemas:
        for _, f in schema.all_fields():
            old_fields[f.field_id] = f
    for schema in after.schemas:
        assert schema.highest_field_id() <= after.last_column_id
        for _, f in schema.all_fields():
            old = old_fields.get(f.field_id)
            if old is None:
                # A new id: above everything assigned before (no reuse).
                assert f.field_id > before.last_column_id
            else:
                assert kind(old.field_type) == kind(f.field_type)
                if isinstance(old.field_type, PrimitiveType):
                    assert is_promotion_allowed(
                        old.field_type, f.field_type
                    ) or is_promotion_allowed(f.field_type, old.field_type)
    old_partition: dict[int, Any] = {}
    for spec in before.partition_specs:
        for pf in spec.fields:
            old_partition[pf.field_id] = pf
    for spec in after.partition_specs:
        for pf in spec.fields:
            assert pf.field_id <= after.last_partition_id
            previous = old_partition.get(pf.field_id)
            if previous is None:
                assert pf.field_id > before.last_partition_id
            else:
                assert previous.source_id == pf.source_id
                assert (
                    "void" in (previous.transform, pf.transform)
                    or previous.transform == pf.transform
                )
    if after.format_version == 1:
        ids = [f.field_id for f in after.spec().fields]
        assert ids == list(range(1000, 1000 + len(ids)))
    assert len({s.schema_id for s in after.schemas}) == len(after.schemas)
    assert TableMetadata.from_json(after.to_json()) == after


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([1, 2, 3]), st.data())
def test_random_evolution_keeps_ids_unique_and_monotonic(version: int, data: st.DataObject) -> None:
    metadata = TableMetadata.new(
        sample_schema(), "file:///t", format_version=version, table_uuid=UUID, last_updated_ms=1
    )
    for _ in range(data.draw(st.integers(1, 12))):
        try:
            after = step(metadata, data)
        except FrazilError:
            continue  # a refusal: the table is unchanged
        check_invariants(metadata, after)
        metadata = after


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([1, 2, 3]), st.data())
def test_random_snapshot_changes_keep_the_logs_consistent(
    version: int, data: st.DataObject
) -> None:
    from frazil.snapshots import Snapshot
    from frazil.table import AddSnapshot, RemoveSnapshotRef, RemoveSnapshots, SetSnapshotRef

    metadata = TableMetadata.new(
        sample_schema(), "file:///t", format_version=version, table_uuid=UUID, last_updated_ms=1
    )
    next_id = 1
    for commit in range(data.draw(st.integers(1, 8))):
        updates: list[Any] = []
        known = [s.snapshot_id for s in metadata.snapshots]
        for _ in range(data.draw(st.integers(1, 3))):
            op = data.draw(st.sampled_from(["add", "add", "main", "branch", "remove", "unref"]))
            if op == "add":
                seq = 0 if version == 1 else metadata.last_sequence_number + len(updates) + 1
                parent = metadata.current_snapshot_id
                rows = {"first_row_id": 10**6 * next_id, "added_rows": 5} if version >= 3 else {}
                snap = Snapshot(next_id, 100 + next_id, parent, seq, f"m{next_id}", **rows)  # type: ignore[arg-type]
                updates += [AddSnapshot(snap), SetSnapshotRef("main", next_id)]
                known.append(next_id)
                next_id += 1
            elif not known:
                continue
            elif op == "main":
                updates.append(SetSnapshotRef("main", data.draw(st.sampled_from(known))))
            elif op == "branch":
                updates.append(SetSnapshotRef("b", data.draw(st.sampled_from(known))))
            elif op == "remove":
                victim = data.draw(st.sampled_from(known))
                updates.append(RemoveSnapshots((victim,)))
                known.remove(victim)
            else:
                updates.append(RemoveSnapshotRef(data.draw(st.sampled_from(["main", "b"]))))
        try:
            after = apply_updates(
                metadata, updates, f"file:///m/{commit}.json", timestamp_ms=1_000 + commit
            )
        except FrazilError:
            continue
        assert after.last_sequence_number >= metadata.last_sequence_number
        live = {s.snapshot_id for s in after.snapshots}
        assert all(e.snapshot_id in live for e in after.snapshot_log)
        assert all(ref.snapshot_id in live for ref in after.refs.values())
        if after.current_snapshot_id is not None:
            assert (
                after.snapshot_log
                and after.snapshot_log[-1].snapshot_id == after.current_snapshot_id
            )
            assert after.refs["main"].snapshot_id == after.current_snapshot_id
        else:
            assert "main" not in after.refs
        if after is not metadata:
            assert after.metadata_log[-1].metadata_file.endswith(".json")
        assert TableMetadata.from_json(after.to_json()) == after
        metadata = after


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 2**63),
        st.sampled_from(["", "main", "b", "x", "identity", "bucket[4]", "branch", "tag", UUID]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["a", "id", "fields", "type"]), inner, max_size=3),
        ),
        max_leaves=6,
    )


_KEYS = [
    "uuid",
    "format-version",
    "schema",
    "last-column-id",
    "schema-id",
    "spec",
    "spec-id",
    "sort-order",
    "sort-order-id",
    "snapshot",
    "snapshot-ids",
    "ref-name",
    "snapshot-id",
    "type",
    "min-snapshots-to-keep",
    "location",
    "updates",
    "removals",
    "statistics",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "action": st.sampled_from(
                    [
                        "assign-uuid",
                        "upgrade-format-version",
                        "add-schema",
                        "set-current-schema",
                        "add-spec",
                        "set-default-spec",
                        "add-sort-order",
                        "set-default-sort-order",
                        "add-snapshot",
                        "set-snapshot-ref",
                        "remove-snapshots",
                        "remove-snapshot-ref",
                        "set-location",
                        "set-properties",
                        "remove-properties",
                        "set-statistics",
                        "remove-statistics",
                    ]
                )
            },
            optional={key: _json_values() for key in _KEYS},
        ),
        min_size=1,
        max_size=4,
    )
)
def test_arbitrary_update_json_is_applied_or_refused_cleanly(nodes: list[dict[str, Any]]) -> None:
    metadata = TableMetadata.new(
        sample_schema(), "file:///t", format_version=2, table_uuid=UUID, last_updated_ms=1
    )
    try:
        updates = [update_from_json(node) for node in nodes]
        after = apply_updates(metadata, updates, timestamp_ms=2)
    except FrazilError:
        return
    assert TableMetadata.from_json(after.to_json()) == after
