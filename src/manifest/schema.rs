//! The Iceberg types of manifests and manifest lists, by field id (spec:
//! "Manifests", "Manifest Lists"; Java: DataFile, ManifestFile, V1/V2/V3Metadata).
//!
//! The read types carry every field any version writes, so one reader handles
//! v1, v2 and v3 files; the write types are exactly each version's field set.

use crate::types::{NestedField, PrimitiveType as P, Type};

fn field(id: i32, name: &str, required: bool, ty: Type) -> NestedField {
    NestedField::new(id, name, required, ty)
}

fn prim(p: P) -> Type {
    Type::Primitive(p)
}

fn int_map(key_id: i32, value_id: i32, value: P) -> Type {
    Type::Map {
        key_id,
        key: Box::new(prim(P::Int)),
        value_id,
        value_required: true,
        value: Box::new(prim(value)),
    }
}

fn list(element_id: i32, element: P) -> Type {
    Type::List {
        element_id,
        element_required: true,
        element: Box::new(prim(element)),
    }
}

/// Which `data_file` fields a version writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Read,
    V1,
    V2,
    V3,
}

fn data_file_fields(partition: Type, shape: Shape) -> Vec<NestedField> {
    let mut fields = Vec::new();
    match shape {
        Shape::Read => fields.push(field(134, "content", false, prim(P::Int))),
        Shape::V2 | Shape::V3 => fields.push(field(134, "content", true, prim(P::Int))),
        Shape::V1 => {}
    }
    fields.push(field(100, "file_path", true, prim(P::String)));
    fields.push(field(101, "file_format", true, prim(P::String)));
    fields.push(field(102, "partition", true, partition));
    fields.push(field(103, "record_count", true, prim(P::Long)));
    fields.push(field(104, "file_size_in_bytes", true, prim(P::Long)));
    if shape == Shape::V1 {
        // Deprecated, but required in v1: "Always write a default in v1".
        fields.push(field(105, "block_size_in_bytes", true, prim(P::Long)));
    }
    fields.push(field(
        108,
        "column_sizes",
        false,
        int_map(117, 118, P::Long),
    ));
    fields.push(field(
        109,
        "value_counts",
        false,
        int_map(119, 120, P::Long),
    ));
    fields.push(field(
        110,
        "null_value_counts",
        false,
        int_map(121, 122, P::Long),
    ));
    fields.push(field(
        137,
        "nan_value_counts",
        false,
        int_map(138, 139, P::Long),
    ));
    fields.push(field(
        125,
        "lower_bounds",
        false,
        int_map(126, 127, P::Binary),
    ));
    fields.push(field(
        128,
        "upper_bounds",
        false,
        int_map(129, 130, P::Binary),
    ));
    fields.push(field(131, "key_metadata", false, prim(P::Binary)));
    fields.push(field(132, "split_offsets", false, list(133, P::Long)));
    if shape != Shape::V1 {
        // list<int>, element id 136: never long (pitfalls: PyIceberg 0.12 wrote long).
        fields.push(field(135, "equality_ids", false, list(136, P::Int)));
    }
    fields.push(field(140, "sort_order_id", false, prim(P::Int)));
    if matches!(shape, Shape::Read | Shape::V3) {
        fields.push(field(142, "first_row_id", false, prim(P::Long)));
    }
    if shape != Shape::V1 {
        fields.push(field(143, "referenced_data_file", false, prim(P::String)));
    }
    if matches!(shape, Shape::Read | Shape::V3) {
        fields.push(field(144, "content_offset", false, prim(P::Long)));
        fields.push(field(145, "content_size_in_bytes", false, prim(P::Long)));
    }
    fields
}

fn entry_fields(partition: Type, shape: Shape) -> Vec<NestedField> {
    let mut fields = vec![
        field(0, "status", true, prim(P::Int)),
        field(1, "snapshot_id", false, prim(P::Long)),
    ];
    if shape != Shape::V1 {
        fields.push(field(3, "sequence_number", false, prim(P::Long)));
        fields.push(field(4, "file_sequence_number", false, prim(P::Long)));
    }
    fields.push(field(
        2,
        "data_file",
        true,
        Type::Struct(data_file_fields(partition, shape)),
    ));
    fields
}

/// The `manifest_entry` read type: every field of v1, v2 and v3.
pub fn entry_read_fields(partition: Type) -> Vec<NestedField> {
    entry_fields(partition, Shape::Read)
}

/// The `manifest_entry` type that format `version` writes.
pub fn entry_write_fields(partition: Type, version: u8) -> Vec<NestedField> {
    let shape = match version {
        1 => Shape::V1,
        2 => Shape::V2,
        _ => Shape::V3,
    };
    entry_fields(partition, shape)
}

fn field_summary() -> Type {
    Type::Struct(vec![
        field(509, "contains_null", true, prim(P::Boolean)),
        field(518, "contains_nan", false, prim(P::Boolean)),
        field(510, "lower_bound", false, prim(P::Binary)),
        field(511, "upper_bound", false, prim(P::Binary)),
    ])
}

fn partitions() -> NestedField {
    field(
        507,
        "partitions",
        false,
        Type::List {
            element_id: 508,
            element_required: true,
            element: Box::new(field_summary()),
        },
    )
}

/// The `manifest_file` read type; `write_version` gives the write type of
/// that version instead (v1 counts optional, v2 sequence numbers required).
pub fn manifest_file_fields(write_version: Option<u8>) -> Vec<NestedField> {
    let v2_required = matches!(write_version, Some(v) if v >= 2);
    let mut fields = vec![
        field(500, "manifest_path", true, prim(P::String)),
        field(501, "manifest_length", true, prim(P::Long)),
        field(502, "partition_spec_id", true, prim(P::Int)),
    ];
    if write_version != Some(1) {
        fields.push(field(517, "content", v2_required, prim(P::Int)));
        fields.push(field(515, "sequence_number", v2_required, prim(P::Long)));
        fields.push(field(
            516,
            "min_sequence_number",
            v2_required,
            prim(P::Long),
        ));
    }
    fields.push(field(503, "added_snapshot_id", true, prim(P::Long)));
    let counts = [
        (504, "added_files_count", P::Int),
        (505, "existing_files_count", P::Int),
        (506, "deleted_files_count", P::Int),
        (512, "added_rows_count", P::Long),
        (513, "existing_rows_count", P::Long),
        (514, "deleted_rows_count", P::Long),
    ];
    if write_version == Some(1) {
        // V1Metadata's order: file counts, partitions, then row counts.
        for &(id, name, ty) in &counts[..3] {
            fields.push(field(id, name, false, prim(ty)));
        }
        fields.push(partitions());
        for &(id, name, ty) in &counts[3..] {
            fields.push(field(id, name, false, prim(ty)));
        }
        fields.push(field(519, "key_metadata", false, prim(P::Binary)));
        return fields;
    }
    for &(id, name, ty) in &counts {
        fields.push(field(id, name, v2_required, prim(ty)));
    }
    fields.push(partitions());
    fields.push(field(519, "key_metadata", false, prim(P::Binary)));
    if matches!(write_version, None | Some(3..)) {
        fields.push(field(520, "first_row_id", false, prim(P::Long)));
    }
    fields
}
