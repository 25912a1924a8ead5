//! File scan tasks read back from Appendix C JSON (Java's
//! `FileScanTaskParser.fromJson`), as the same lazy views planning gives:
//! the data file and its delete files become one-row (or few-row) decoded
//! manifests. Sequence numbers are not part of Appendix C, so such files
//! have none.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StructArray};
use arrow_schema::{Field, Fields};
use serde_json::Value;

use super::files::{FileRef, ManifestData};
use super::planner::PlannedFile;
use crate::arrow::datum::array_from_datums;
use crate::error::{Error, Result};
use crate::expr::{bind, json as expr_json, Bound, Datum};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::types::Type;
use crate::values;

/// A task parsed from JSON.
pub struct ParsedTask {
    /// Its `deletes` are positions in `delete_files`.
    pub planned: PlannedFile,
    pub delete_files: Arc<[FileRef]>,
    pub start: i64,
    pub length: i64,
    pub schema: Schema,
    pub schema_json: Value,
}

fn bad(what: &str) -> Error {
    Error::InvalidData(format!("file scan task JSON: {what}"))
}

fn get<'a>(json: &'a Value, key: &str, what: &str) -> Result<&'a Value> {
    json.get(key)
        .ok_or_else(|| bad(&format!("{what} has no {key:?}")))
}

fn long(json: &Value, key: &str, what: &str) -> Result<i64> {
    get(json, key, what)?
        .as_i64()
        .ok_or_else(|| bad(&format!("{what}: {key:?} is not a long")))
}

fn opt_long(json: &Value, key: &str, what: &str) -> Result<Option<i64>> {
    match json.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| bad(&format!("{what}: {key:?} is not a long"))),
    }
}

fn opt_str<'a>(json: &'a Value, key: &str, what: &str) -> Result<Option<&'a str>> {
    match json.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| bad(&format!("{what}: {key:?} is not a string"))),
    }
}

/// `{"keys": [..], "values": [..]}` with equal lengths.
fn map_pairs<'a>(json: &'a Value, key: &str, what: &str) -> Result<Option<Vec<(i32, &'a Value)>>> {
    let Some(map) = json.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let keys = map.get("keys").and_then(Value::as_array);
    let vals = map.get("values").and_then(Value::as_array);
    let (Some(keys), Some(vals)) = (keys, vals) else {
        return Err(bad(&format!(
            "{what}: {key:?} needs \"keys\" and \"values\""
        )));
    };
    if keys.len() != vals.len() {
        return Err(bad(&format!(
            "{what}: {key:?} has {} keys but {} values",
            keys.len(),
            vals.len()
        )));
    }
    keys.iter()
        .zip(vals)
        .map(|(k, v)| {
            let k = k
                .as_i64()
                .and_then(|k| i32::try_from(k).ok())
                .ok_or_else(|| bad(&format!("{what}: {key:?} has a key that is not an int")))?;
            Ok((k, v))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn hex(value: &Value, what: &str) -> Result<Vec<u8>> {
    match values::from_json(&Type::Primitive(crate::types::PrimitiveType::Binary), value)? {
        values::Literal::Binary(b) => Ok(b),
        _ => Err(bad(&format!("{what} is not hexadecimal"))),
    }
}

fn content_code(text: &str) -> Result<i32> {
    match text {
        "DATA" => Ok(0),
        "POSITION_DELETES" => Ok(1),
        "EQUALITY_DELETES" => Ok(2),
        other => Err(bad(&format!("unknown content {other:?}"))),
    }
}

/// The data and file sequence numbers of a task's data file, which Appendix C
/// JSON does not carry: a caller that knows them (an engine shipping the JSON to
/// its executors beside them) gives them, so that what inherits them (row
/// lineage's `_last_updated_sequence_number`) reads as from the manifest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SequenceNumbers {
    pub data: Option<i64>,
    pub file: Option<i64>,
}

/// Decoded-manifest columns for `files` (content-file JSON) of one spec, each
/// entry with `sequence` (null: unknown).
fn files_batch(
    files: &[&Value],
    partition_type: &Type,
    sequence: SequenceNumbers,
) -> Result<RecordBatch> {
    let Type::Struct(partition_fields) = partition_type else {
        return Err(Error::Internal("partition type is not a struct".to_owned()));
    };
    let n = files.len();
    let mut content = Int32Builder::new();
    let mut paths = StringBuilder::new();
    let mut formats = StringBuilder::new();
    let mut records = Int64Builder::new();
    let mut sizes = Int64Builder::new();
    let mut long_maps: Vec<MapBuilder<Int32Builder, Int64Builder>> = (0..4)
        .map(|_| MapBuilder::new(None, Int32Builder::new(), Int64Builder::new()))
        .collect();
    let mut byte_maps: Vec<MapBuilder<Int32Builder, BinaryBuilder>> = (0..2)
        .map(|_| MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new()))
        .collect();
    let mut keys = BinaryBuilder::new();
    let mut offsets = ListBuilder::new(Int64Builder::new());
    let mut equality = ListBuilder::new(Int32Builder::new());
    let mut sort_orders = Int32Builder::new();
    let mut first_rows = Int64Builder::new();
    let mut referenced = StringBuilder::new();
    let mut content_offsets = Int64Builder::new();
    let mut content_sizes = Int64Builder::new();
    let mut partition_values: Vec<Vec<Option<Datum>>> = vec![Vec::new(); partition_fields.len()];
    for file in files {
        let path = file
            .get("file-path")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a content file has no \"file-path\""))?;
        let what = format!("content file {path}");
        let what = what.as_str();
        content.append_value(content_code(
            get(file, "content", what)?
                .as_str()
                .ok_or_else(|| bad(&format!("{what}: content is not a string")))?,
        )?);
        paths.append_value(path);
        formats.append_value(
            get(file, "file-format", what)?
                .as_str()
                .ok_or_else(|| bad(&format!("{what}: file-format is not a string")))?,
        );
        records.append_value(long(file, "record-count", what)?);
        sizes.append_value(long(file, "file-size-in-bytes", what)?);
        let partition = file.get("partition").filter(|v| !v.is_null());
        if partition.is_some_and(|p| !p.is_object()) {
            return Err(bad(&format!("{what}: partition is not an object")));
        }
        for (i, field) in partition_fields.iter().enumerate() {
            let value = partition.and_then(|p| p.get(field.id.to_string()));
            let datum = match (value, field.field_type.as_primitive()) {
                (None | Some(Value::Null), _) | (_, None) => None,
                (Some(v), Some(ty)) => Some(Datum {
                    ty,
                    value: values::from_json(&field.field_type, v).map_err(|e| {
                        bad(&format!("{what}: partition field {}: {e}", field.name))
                    })?,
                }),
            };
            partition_values[i].push(datum);
        }
        for (builder, key) in long_maps.iter_mut().zip([
            "column-sizes",
            "value-counts",
            "null-value-counts",
            "nan-value-counts",
        ]) {
            match map_pairs(file, key, what)? {
                None => builder
                    .append(false)
                    .map_err(|e| Error::Internal(e.to_string()))?,
                Some(pairs) => {
                    for (k, v) in pairs {
                        builder.keys().append_value(k);
                        builder.values().append_option(v.as_i64());
                    }
                    builder
                        .append(true)
                        .map_err(|e| Error::Internal(e.to_string()))?;
                }
            }
        }
        for (builder, key) in byte_maps.iter_mut().zip(["lower-bounds", "upper-bounds"]) {
            match map_pairs(file, key, what)? {
                None => builder
                    .append(false)
                    .map_err(|e| Error::Internal(e.to_string()))?,
                Some(pairs) => {
                    for (k, v) in pairs {
                        builder.keys().append_value(k);
                        builder.values().append_value(hex(v, what)?);
                    }
                    builder
                        .append(true)
                        .map_err(|e| Error::Internal(e.to_string()))?;
                }
            }
        }
        match file.get("key-metadata").filter(|v| !v.is_null()) {
            None => keys.append_null(),
            Some(v) => keys.append_value(hex(v, what)?),
        }
        match file.get("split-offsets").filter(|v| !v.is_null()) {
            None => offsets.append(false),
            Some(v) => {
                for o in v
                    .as_array()
                    .ok_or_else(|| bad(&format!("{what}: split-offsets is not a list")))?
                {
                    offsets
                        .values()
                        .append_value(o.as_i64().ok_or_else(|| {
                            bad(&format!("{what}: a split offset is not a long"))
                        })?);
                }
                offsets.append(true);
            }
        }
        match file.get("equality-ids").filter(|v| !v.is_null()) {
            None => equality.append(false),
            Some(v) => {
                for id in v
                    .as_array()
                    .ok_or_else(|| bad(&format!("{what}: equality-ids is not a list")))?
                {
                    equality.values().append_value(
                        id.as_i64()
                            .and_then(|i| i32::try_from(i).ok())
                            .ok_or_else(|| bad(&format!("{what}: an equality id is not an int")))?,
                    );
                }
                equality.append(true);
            }
        }
        sort_orders.append_option(
            opt_long(file, "sort-order-id", what)?
                .map(|v| i32::try_from(v).map_err(|_| bad(&format!("{what}: sort-order-id"))))
                .transpose()?,
        );
        first_rows.append_option(opt_long(file, "first-row-id", what)?);
        referenced.append_option(opt_str(file, "referenced-data-file", what)?);
        content_offsets.append_option(opt_long(file, "content-offset", what)?);
        content_sizes.append_option(opt_long(file, "content-size-in-bytes", what)?);
    }
    let partition_columns: Vec<ArrayRef> = partition_fields
        .iter()
        .zip(&partition_values)
        .map(|(f, vals)| {
            array_from_datums(
                f.field_type
                    .as_primitive()
                    .unwrap_or(crate::types::PrimitiveType::Unknown),
                vals,
            )
        })
        .collect::<Result<_>>()?;
    let partition: ArrayRef = if partition_columns.is_empty() {
        Arc::new(StructArray::new_empty_fields(n, None))
    } else {
        let fields: Fields = partition_fields
            .iter()
            .zip(&partition_columns)
            .map(|(f, c)| Field::new(f.name.clone(), c.data_type().clone(), true))
            .collect();
        Arc::new(
            StructArray::try_new(fields, partition_columns, None)
                .map_err(|e| Error::Internal(e.to_string()))?,
        )
    };
    let mut columns: Vec<(&str, ArrayRef)> = vec![
        ("content", Arc::new(content.finish())),
        ("file_path", Arc::new(paths.finish())),
        ("file_format", Arc::new(formats.finish())),
        ("partition", partition),
        ("record_count", Arc::new(records.finish())),
        ("file_size_in_bytes", Arc::new(sizes.finish())),
    ];
    let long_names = [
        "column_sizes",
        "value_counts",
        "null_value_counts",
        "nan_value_counts",
    ];
    for (name, mut builder) in long_names.into_iter().zip(long_maps) {
        columns.push((name, Arc::new(builder.finish())));
    }
    for (name, mut builder) in ["lower_bounds", "upper_bounds"].into_iter().zip(byte_maps) {
        columns.push((name, Arc::new(builder.finish())));
    }
    columns.extend([
        ("key_metadata", Arc::new(keys.finish()) as ArrayRef),
        ("split_offsets", Arc::new(offsets.finish())),
        ("equality_ids", Arc::new(equality.finish())),
        ("sort_order_id", Arc::new(sort_orders.finish())),
        ("first_row_id", Arc::new(first_rows.finish())),
        ("referenced_data_file", Arc::new(referenced.finish())),
        ("content_offset", Arc::new(content_offsets.finish())),
        ("content_size_in_bytes", Arc::new(content_sizes.finish())),
    ]);
    let data_file = struct_of(columns)?;
    let nulls = || -> ArrayRef { Arc::new(Int64Array::new_null(n)) };
    let repeated = |v: Option<i64>| -> ArrayRef { Arc::new(Int64Array::from(vec![v; n])) };
    let entries = struct_of(vec![
        ("status", Arc::new(Int32Array::from(vec![1; n])) as ArrayRef),
        ("snapshot_id", nulls()),
        ("sequence_number", repeated(sequence.data)),
        ("file_sequence_number", repeated(sequence.file)),
        ("data_file", Arc::new(data_file)),
    ])?;
    Ok(RecordBatch::from(entries))
}

fn struct_of(columns: Vec<(&str, ArrayRef)>) -> Result<StructArray> {
    let fields: Fields = columns
        .iter()
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    StructArray::try_new(fields, columns.into_iter().map(|(_, c)| c).collect(), None)
        .map_err(|e| Error::Internal(e.to_string()))
}

fn manifest_of(
    files: &[&Value],
    spec: Arc<PartitionSpec>,
    schema: &Schema,
    label: &str,
    sequence: SequenceNumbers,
) -> Result<Arc<ManifestData>> {
    let batch = files_batch(files, &spec.partition_type(schema)?, sequence)?;
    ManifestData::of_spec(label, spec, schema, batch)
}

/// Parses Appendix C task JSON (its data file's sequence numbers unknown).
pub fn task_from_json(json: &Value) -> Result<ParsedTask> {
    task_from_json_with(json, SequenceNumbers::default())
}

/// Parses Appendix C task JSON whose data file has the sequence numbers
/// `sequence` (its delete files' stay unknown: the reader needs none).
pub fn task_from_json_with(json: &Value, sequence: SequenceNumbers) -> Result<ParsedTask> {
    if let Some(kind) = json.get("task-type") {
        if !kind
            .as_str()
            .is_some_and(|k| k.eq_ignore_ascii_case("file-scan-task"))
        {
            return Err(bad(&format!("task-type {kind} is not a file-scan-task")));
        }
    }
    let schema_json = get(json, "schema", "task")?.clone();
    let schema = Schema::from_json(&schema_json)?;
    let spec = Arc::new(PartitionSpec::from_json(get(json, "spec", "task")?, 0)?);
    let data = get(json, "data-file", "task")?;
    if data.get("spec-id").and_then(Value::as_i64) != Some(i64::from(spec.spec_id)) {
        return Err(bad(&format!(
            "the data file's spec-id is not the task's spec ({})",
            spec.spec_id
        )));
    }
    let data_manifest = manifest_of(&[data], spec.clone(), &schema, "<task JSON>", sequence)?;
    let mut deletes = Vec::new();
    if let Some(list) = json.get("delete-files").filter(|v| !v.is_null()) {
        let list = list
            .as_array()
            .ok_or_else(|| bad("\"delete-files\" is not a list"))?;
        for delete in list {
            let spec_id = delete
                .get("spec-id")
                .and_then(Value::as_i64)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| bad("a delete file has no int \"spec-id\""))?;
            // Global equality deletes keep their unpartitioned spec's id.
            let delete_spec = if spec_id == spec.spec_id {
                spec.clone()
            } else {
                let empty = delete
                    .get("partition")
                    .and_then(Value::as_object)
                    .is_none_or(|p| p.is_empty());
                if !empty {
                    return Err(bad(&format!(
                        "delete file with spec-id {spec_id} has partition values, but the task \
                         carries only spec {}",
                        spec.spec_id
                    )));
                }
                Arc::new(PartitionSpec::unpartitioned(spec_id))
            };
            let manifest = manifest_of(
                &[delete],
                delete_spec,
                &schema,
                "<task JSON>",
                SequenceNumbers::default(),
            )?;
            deletes.push(FileRef::new(&manifest, 0));
        }
    }
    let residual: Bound = match json.get("residual-filter") {
        None | Some(Value::Null) => Bound::True,
        Some(r) => bind(&expr_json::from_json(r)?, &schema, true)?,
    };
    let data_file = FileRef::new(&data_manifest, 0);
    let length = match json.get("length") {
        None => data_file.file_size(),
        Some(_) => long(json, "length", "task")?,
    };
    let ids = (0..deletes.len())
        .map(|i| u32::try_from(i).map_err(|_| bad("too many delete files")))
        .collect::<Result<Vec<_>>>()?;
    Ok(ParsedTask {
        start: opt_long(json, "start", "task")?.unwrap_or(0),
        length,
        planned: PlannedFile {
            file: data_file,
            deletes: ids.into(),
            residual: Arc::new(residual),
        },
        delete_files: deletes.into(),
        schema,
        schema_json,
    })
}
