//! Manifest lists (spec: "Manifest Lists"; Appendix E for the v1 defaults).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StructArray};

use super::project::replace_child;
use super::reader::{format_version, to_batch};
use super::schema::manifest_file_fields;
use super::writer::conform;
use crate::avro::encode::avro_schema;
use crate::avro::{self, container, write_rows, Codec, ContainerWriter};
use crate::error::{Error, Result};
use crate::types::Type;

/// Decodes a manifest list. v1 lists get `content`, `sequence_number` and
/// `min_sequence_number` of 0 (Appendix E: "Reading v1 metadata for v2").
pub fn read_manifest_list(data: &[u8], location: &str) -> Result<RecordBatch> {
    read_inner(data).map_err(avro::in_file(location))
}

fn read_inner(data: &[u8]) -> Result<RecordBatch> {
    let header = container::read_header(data)?;
    super::reader::require_field_ids(&header.schema)?;
    let version = format_version(&header)?;
    let fields = manifest_file_fields(None);
    let mut array = avro::read_with(data, &header, &Type::Struct(fields))?;
    for name in ["content", "sequence_number", "min_sequence_number"] {
        let Some(column) = array.column_by_name(name) else {
            continue;
        };
        if version >= 2 {
            // Required from v2 on: a null is a broken list, not a v1 default.
            if let Some(row) = (0..column.len()).find(|&i| column.is_null(i)) {
                let path = array
                    .column_by_name("manifest_path")
                    .map(|c| c.as_string::<i32>().value(row).to_owned())
                    .unwrap_or_default();
                return Err(Error::InvalidData(format!(
                    "manifest list (format v{version}) has no {name} for manifest {path}"
                )));
            }
            continue;
        }
        let filled: ArrayRef = if name == "content" {
            let c = column.as_primitive::<Int32Type>();
            Arc::new(
                c.iter()
                    .map(|v| Some(v.unwrap_or(0)))
                    .collect::<Int32Array>(),
            )
        } else {
            let c = column.as_primitive::<Int64Type>();
            Arc::new(
                c.iter()
                    .map(|v| Some(v.unwrap_or(0)))
                    .collect::<Int64Array>(),
            )
        };
        array = replace_child(&array, name, filled)?;
    }
    let rows = array.len();
    let metadata: HashMap<String, String> = [
        "snapshot-id",
        "parent-snapshot-id",
        "sequence-number",
        "format-version",
        "first-row-id",
    ]
    .iter()
    .filter_map(|k| header.meta_str(k).map(|v| ((*k).to_owned(), v.to_owned())))
    .collect();
    to_batch(array, rows, metadata)
}

/// What a manifest list is written for.
#[derive(Debug, Clone)]
pub struct ListOptions {
    pub format_version: u8,
    pub snapshot_id: i64,
    pub parent_snapshot_id: Option<i64>,
    /// The snapshot's sequence number: assigned to manifests that have none
    /// yet (v2+; spec: "the (optimistic) sequence number of the snapshot is
    /// written for all new manifest files tracked by the list").
    pub sequence_number: i64,
    /// v3: the first row id of the snapshot, assigned to data manifests.
    pub first_row_id: Option<i64>,
    pub codec: Codec,
}

/// Encodes a manifest list from rows in the read shape of
/// [`manifest_file_fields`]. Returns the file bytes and, for v3, the next
/// unassigned row id.
pub fn write_manifest_list(
    manifests: &StructArray,
    options: &ListOptions,
) -> Result<(Vec<u8>, Option<i64>)> {
    write_manifest_list_using(manifests, options, ContainerWriter::HandWritten)
}

/// [`write_manifest_list`] with the container writer `writer`.
pub fn write_manifest_list_using(
    manifests: &StructArray,
    options: &ListOptions,
    writer: ContainerWriter,
) -> Result<(Vec<u8>, Option<i64>)> {
    let version = options.format_version;
    if !(1..=3).contains(&version) {
        return Err(Error::InvalidValue(format!(
            "cannot write format version {version}"
        )));
    }
    let mut manifests = manifests.clone();
    let mut next_row_id = options.first_row_id;
    // Manifests without a snapshot id are new in this snapshot.
    if let Some(column) = manifests.column_by_name("added_snapshot_id") {
        let c = column.as_primitive_opt::<Int64Type>().ok_or_else(|| {
            Error::TypeMismatch("column added_snapshot_id must be int64".to_owned())
        })?;
        let filled: Int64Array = c
            .iter()
            .map(|v| Some(v.unwrap_or(options.snapshot_id)))
            .collect();
        manifests = replace_child(&manifests, "added_snapshot_id", Arc::new(filled))?;
    }
    if version >= 2 {
        for name in ["sequence_number", "min_sequence_number"] {
            if let Some(column) = manifests.column_by_name(name) {
                let c = column
                    .as_primitive_opt::<Int64Type>()
                    .ok_or_else(|| Error::TypeMismatch(format!("column {name} must be int64")))?;
                let filled: Int64Array = c
                    .iter()
                    .map(|v| Some(v.unwrap_or(options.sequence_number)))
                    .collect();
                manifests = replace_child(&manifests, name, Arc::new(filled))?;
            }
        }
    }
    if version >= 3 {
        if let (Some(column), Some(start)) = (
            manifests.column_by_name("first_row_id"),
            options.first_row_id,
        ) {
            let first = column
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(|| Error::TypeMismatch("column first_row_id must be int64".to_owned()))?
                .clone();
            let content = int_column(&manifests, "content")?;
            let added = long_column(&manifests, "added_rows_count")?;
            let existing = long_column(&manifests, "existing_rows_count")?;
            let mut next = start;
            // Java (ManifestListWriter): data manifests without a first row id
            // get the next ids, reserving room for added and existing rows.
            let filled: Int64Array = (0..first.len())
                .map(|i| {
                    if first.is_valid(i) {
                        return Some(first.value(i));
                    }
                    if content.get(i).copied().flatten().unwrap_or(0) != 0 {
                        return None;
                    }
                    let id = next;
                    let rows = added.get(i).copied().flatten().unwrap_or(0)
                        + existing.get(i).copied().flatten().unwrap_or(0);
                    next = next.saturating_add(rows);
                    Some(id)
                })
                .collect();
            next_row_id = Some(next);
            manifests = replace_child(&manifests, "first_row_id", Arc::new(filled))?;
        }
    }
    if version == 1 {
        if let Ok(content) = int_column(&manifests, "content") {
            if content.iter().any(|c| c.is_some_and(|c| c != 0)) {
                return Err(Error::InvalidValue(
                    "a v1 manifest list can only track data manifests".to_owned(),
                ));
            }
        }
    }
    let fields = manifest_file_fields(Some(version));
    let rows = conform(&manifests, &fields)?;
    let schema = avro_schema(&fields, "manifest_file").to_string();
    let parent = options
        .parent_snapshot_id
        .map(|p| p.to_string())
        .unwrap_or_else(|| "null".to_owned());
    let mut metadata = vec![
        ("snapshot-id".to_owned(), options.snapshot_id.to_string()),
        ("parent-snapshot-id".to_owned(), parent),
    ];
    if version >= 2 {
        metadata.push((
            "sequence-number".to_owned(),
            options.sequence_number.to_string(),
        ));
    }
    if let (3, Some(first)) = (version, options.first_row_id) {
        metadata.push(("first-row-id".to_owned(), first.to_string()));
    }
    metadata.push(("format-version".to_owned(), version.to_string()));
    let file = write_rows(
        writer,
        &schema,
        &metadata,
        options.codec,
        &fields,
        &rows,
        "manifest list row",
    )?;
    Ok((file, next_row_id))
}

fn int_column(array: &StructArray, name: &str) -> Result<Vec<Option<i32>>> {
    let column = array
        .column_by_name(name)
        .ok_or_else(|| Error::InvalidValue(format!("missing column {name}")))?;
    let c = column
        .as_primitive_opt::<Int32Type>()
        .ok_or_else(|| Error::TypeMismatch(format!("column {name} must be int32")))?;
    Ok(c.iter().collect())
}

fn long_column(array: &StructArray, name: &str) -> Result<Vec<Option<i64>>> {
    let column = array
        .column_by_name(name)
        .ok_or_else(|| Error::InvalidValue(format!("missing column {name}")))?;
    let c = column
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::TypeMismatch(format!("column {name} must be int64")))?;
    Ok(c.iter().collect())
}
