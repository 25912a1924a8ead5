//! Writing manifests (spec: "Manifests"): the version's exact Avro schema,
//! the required key-value metadata, and the manifest-list entry that
//! describes the result (counts, partition summaries, min sequence number).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{new_null_array, Array, ArrayRef, Int64Array, StructArray};
use arrow_schema::{DataType, Field, Fields};

use super::project::replace_child;
use super::schema::entry_write_fields;
use super::summary::{summarize, FieldSummary};
use crate::avro::columns::arrow_type;
use crate::avro::encode::avro_schema;
use crate::avro::{write_rows, Codec, ContainerWriter};
use crate::error::{Error, Result};
use crate::spec::partition::partition_type_of;
use crate::types::{NestedField, Type};

/// Java's default for the deprecated v1 `block_size_in_bytes` (64 MB).
const V1_BLOCK_SIZE: i64 = 64 * 1024 * 1024;

/// How a manifest is written.
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    pub format_version: u8,
    /// The table schema JSON (Appendix C) the manifest was written with.
    pub schema_json: String,
    /// The partition spec: its JSON object or its fields array.
    pub spec_json: String,
    pub spec_id: i32,
    /// `false` for data manifests, `true` for delete manifests.
    pub deletes: bool,
    /// Written into entries whose snapshot id is null.
    pub snapshot_id: Option<i64>,
    pub codec: Codec,
}

/// What the manifest list needs to know about a written manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestStats {
    pub added_files: i32,
    pub existing_files: i32,
    pub deleted_files: i32,
    pub added_rows: i64,
    pub existing_rows: i64,
    pub deleted_rows: i64,
    /// The least data sequence number of live entries that have one.
    pub min_sequence_number: Option<i64>,
    pub partitions: Vec<FieldSummary>,
}

/// `array`'s children rearranged into exactly `fields` (by name,
/// recursively); absent optional fields become nulls.
pub fn conform(array: &StructArray, fields: &[NestedField]) -> Result<StructArray> {
    conform_with(array, fields, &|_, _| None)
}

/// [`conform`], with `default` giving the column for absent fields it knows.
pub fn conform_with(
    array: &StructArray,
    fields: &[NestedField],
    default: &dyn Fn(&NestedField, usize) -> Option<ArrayRef>,
) -> Result<StructArray> {
    let rows = array.len();
    let mut arrow_fields = Vec::with_capacity(fields.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(fields.len());
    for f in fields {
        let column: ArrayRef = match (array.column_by_name(&f.name), &f.field_type) {
            (Some(c), Type::Struct(children)) => {
                let inner = c.as_struct_opt().ok_or_else(|| {
                    Error::TypeMismatch(format!(
                        "column {} must be a struct, not {}",
                        f.name,
                        c.data_type()
                    ))
                })?;
                Arc::new(conform_with(inner, children, default)?)
            }
            (Some(c), _) => c.clone(),
            (None, _) if default(f, rows).is_some() => {
                default(f, rows).unwrap_or_else(|| new_null_array(&DataType::Null, rows))
            }
            (None, _) if f.id == 105 => Arc::new(Int64Array::from(vec![V1_BLOCK_SIZE; rows])),
            (None, _) if !f.required => new_null_array(&arrow_type(&f.field_type), rows),
            (None, Type::Struct(children)) if children.is_empty() => {
                Arc::new(StructArray::new_empty_fields(rows, None))
            }
            (None, _) => {
                return Err(Error::InvalidValue(format!(
                    "missing required column {}",
                    f.name
                )))
            }
        };
        arrow_fields.push(Field::new(f.name.clone(), column.data_type().clone(), true));
        columns.push(column);
    }
    if columns.is_empty() {
        return Ok(StructArray::new_empty_fields(rows, array.nulls().cloned()));
    }
    StructArray::try_new(Fields::from(arrow_fields), columns, array.nulls().cloned())
        .map_err(|e| Error::TypeMismatch(e.to_string()))
}

fn i64_values(array: &StructArray, name: &str) -> Result<Option<Int64Array>> {
    match array.column_by_name(name) {
        None => Ok(None),
        Some(c) => c
            .as_primitive_opt::<Int64Type>()
            .cloned()
            .map(Some)
            .ok_or_else(|| {
                Error::TypeMismatch(format!(
                    "column {name} must be int64, not {}",
                    c.data_type()
                ))
            }),
    }
}

fn i32_values(array: &StructArray, name: &str) -> Result<Vec<Option<i32>>> {
    let c = array
        .column_by_name(name)
        .ok_or_else(|| Error::InvalidValue(format!("missing required column {name}")))?;
    Ok(c.as_primitive_opt::<Int32Type>()
        .ok_or_else(|| {
            Error::TypeMismatch(format!(
                "column {name} must be int32, not {}",
                c.data_type()
            ))
        })?
        .iter()
        .collect())
}

/// Encodes manifest entries given in the read shape (see
/// `schema::entry_read_fields`). Returns the file and its statistics.
pub fn write_manifest(
    entries: &StructArray,
    options: &ManifestOptions,
) -> Result<(Vec<u8>, ManifestStats)> {
    write_manifest_using(entries, options, ContainerWriter::HandWritten)
}

/// [`write_manifest`] with the container writer `writer` (the benchmark
/// compares them).
pub fn write_manifest_using(
    entries: &StructArray,
    options: &ManifestOptions,
    writer: ContainerWriter,
) -> Result<(Vec<u8>, ManifestStats)> {
    let version = options.format_version;
    if !(1..=3).contains(&version) {
        return Err(Error::InvalidValue(format!(
            "cannot write format version {version}"
        )));
    }
    if version == 1 && options.deletes {
        return Err(Error::InvalidValue(
            "v1 manifests cannot hold delete files".to_owned(),
        ));
    }
    let partition = partition_type_for(&options.spec_json, &options.schema_json)?;
    let fields = entry_write_fields(partition.clone(), version);

    let mut entries = entries.clone();
    if let (Some(snapshot_id), Some(column)) =
        (options.snapshot_id, i64_values(&entries, "snapshot_id")?)
    {
        let filled: Int64Array = column
            .iter()
            .map(|v| Some(v.unwrap_or(snapshot_id)))
            .collect();
        entries = replace_child(&entries, "snapshot_id", Arc::new(filled))?;
    }
    if !options.deletes {
        // A data manifest's files are data files (content 0) unless told otherwise.
        if let Some(df) = entries
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
            .cloned()
        {
            if let Some(content) = df
                .column_by_name("content")
                .and_then(|c| c.as_primitive_opt::<Int32Type>())
            {
                if content.null_count() > 0 {
                    let filled: arrow_array::Int32Array =
                        content.iter().map(|v| Some(v.unwrap_or(0))).collect();
                    let df = replace_child(&df, "content", Arc::new(filled))?;
                    entries = replace_child(&entries, "data_file", Arc::new(df))?;
                }
            }
        }
    }
    // Absent `content` in a data manifest: data files (content 0).
    let deletes = options.deletes;
    let rows = conform_with(&entries, &fields, &|f, rows| {
        (f.id == 134 && !deletes)
            .then(|| Arc::new(arrow_array::Int32Array::from(vec![0; rows])) as ArrayRef)
    })?;
    let data_file = rows
        .column_by_name("data_file")
        .and_then(|c| c.as_struct_opt())
        .ok_or_else(|| Error::InvalidValue("missing required column data_file".to_owned()))?
        .clone();

    // Statistics (Java: ManifestWriter.addEntry) and validation of values
    // the Avro schema cannot check.
    let status = i32_values(&rows, "status")?;
    let records = i64_values(&data_file, "record_count")?
        .ok_or_else(|| Error::InvalidValue("missing required column record_count".to_owned()))?;
    let seqs = i64_values(&rows, "sequence_number")?;
    let contents = if version >= 2 {
        Some(i32_values(&data_file, "content")?)
    } else {
        None
    };
    let mut stats = ManifestStats {
        added_files: 0,
        existing_files: 0,
        deleted_files: 0,
        added_rows: 0,
        existing_rows: 0,
        deleted_rows: 0,
        min_sequence_number: None,
        partitions: Vec::new(),
    };
    for (i, s) in status.iter().enumerate() {
        let rows_in_file = if records.is_valid(i) {
            records.value(i)
        } else {
            0
        };
        match s {
            Some(0) => {
                stats.existing_files += 1;
                stats.existing_rows += rows_in_file;
            }
            Some(1) => {
                stats.added_files += 1;
                stats.added_rows += rows_in_file;
            }
            Some(2) => {
                stats.deleted_files += 1;
                stats.deleted_rows += rows_in_file;
            }
            other => {
                return Err(Error::InvalidValue(format!(
                "entry {i}: status must be 0 (existing), 1 (added) or 2 (deleted), not {other:?}"
            )))
            }
        }
        if let Some(contents) = &contents {
            let content = contents[i].unwrap_or(-1);
            let ok = if options.deletes {
                content == 1 || content == 2
            } else {
                content == 0
            };
            if !ok {
                return Err(Error::InvalidValue(format!(
                    "entry {i}: content {content} does not belong in a {} manifest",
                    if options.deletes { "delete" } else { "data" }
                )));
            }
        }
        if let Some(seqs) = &seqs {
            if *s != Some(2) && seqs.is_valid(i) {
                let seq = seqs.value(i);
                stats.min_sequence_number =
                    Some(stats.min_sequence_number.map_or(seq, |m| m.min(seq)));
            }
        }
    }
    let partition_values = data_file
        .column_by_name("partition")
        .and_then(|c| c.as_struct_opt())
        .ok_or_else(|| Error::InvalidValue("missing required column partition".to_owned()))?;
    for column in partition_values.columns() {
        stats.partitions.push(summarize(column.as_ref())?);
    }

    let schema_id = serde_json::from_str::<serde_json::Value>(&options.schema_json)
        .ok()
        .and_then(|v| v.get("schema-id").and_then(serde_json::Value::as_i64))
        .unwrap_or(0);
    let spec_fields_json = spec_fields_json(&options.spec_json)?;
    let metadata = vec![
        ("schema".to_owned(), options.schema_json.clone()),
        ("schema-id".to_owned(), schema_id.to_string()),
        ("partition-spec".to_owned(), spec_fields_json),
        ("partition-spec-id".to_owned(), options.spec_id.to_string()),
        ("format-version".to_owned(), version.to_string()),
        (
            "content".to_owned(),
            if options.deletes { "deletes" } else { "data" }.to_owned(),
        ),
    ];
    let schema = avro_schema(&fields, "manifest_entry").to_string();
    let file = write_rows(
        writer,
        &schema,
        &metadata,
        options.codec,
        &fields,
        &rows,
        "manifest entry",
    )?;
    Ok((file, stats))
}

/// The `partition-spec` metadata value: the spec's fields array, as Java
/// writes it (PartitionSpecParser.toJsonFields).
fn spec_fields_json(spec_json: &str) -> Result<String> {
    let json: serde_json::Value = serde_json::from_str(spec_json)
        .map_err(|e| Error::InvalidValue(format!("partition spec is not valid JSON: {e}")))?;
    Ok(match json.get("fields") {
        Some(fields) => fields.to_string(),
        None => json.to_string(),
    })
}

/// The partition type a spec and schema give (for callers building entries).
pub fn partition_type_for(spec_json: &str, schema_json: &str) -> Result<Type> {
    partition_type_of(spec_json, schema_json).map_err(|e| Error::InvalidValue(e.to_string()))
}
