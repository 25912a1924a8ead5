//! File scan tasks and content files as Appendix C JSON ("Content File (Data
//! and Delete) Serialization", "File Scan Task Serialization"), the form
//! Java's `FileScanTaskParser` / `ContentFileParser` write and read, so that
//! a task planned here can be sent to another process (a Spark executor).

use serde_json::{json, Map, Value};

use super::files::{FileRef, MetricMap};
use crate::arrow::datum::datum_at;
use crate::error::{Error, Result};
use crate::expr::json as expr_json;
use crate::expr::Bound;
use crate::types::Type;
use crate::values;

/// Java's `FileFormat` names are upper case.
fn format_name(format: &str) -> String {
    format.to_ascii_uppercase()
}

/// The partition tuple keyed by partition field id; nulls are left out
/// (Java's `SingleValueParser` for structs).
pub fn partition_json(file: &FileRef) -> Result<Value> {
    let m = &file.manifest;
    let Type::Struct(fields) = &m.partition_type else {
        return Err(Error::Internal("partition type is not a struct".to_owned()));
    };
    let mut out = Map::new();
    for (i, field) in fields.iter().enumerate() {
        let Some(ty) = field.field_type.as_primitive() else {
            continue;
        };
        if let Some(datum) = datum_at(m.partition.column(i).as_ref(), file.row(), ty)? {
            out.insert(field.id.to_string(), datum.to_json());
        }
    }
    Ok(Value::Object(out))
}

fn long_map(map: &Option<MetricMap>, row: usize) -> Option<Value> {
    let map = map.as_ref().filter(|m| !m.is_null(row))?;
    let (keys, vals): (Vec<i32>, Vec<Value>) = map
        .entries(row)
        .map(|(k, i)| (k, map.long_at(i).map_or(Value::Null, Value::from)))
        .unzip();
    Some(json!({"keys": keys, "values": vals}))
}

fn bytes_map(map: &Option<MetricMap>, row: usize) -> Option<Value> {
    let map = map.as_ref().filter(|m| !m.is_null(row))?;
    let (keys, vals): (Vec<i32>, Vec<Value>) = map
        .entries(row)
        .map(|(k, i)| {
            (
                k,
                map.bytes_at(i)
                    .map_or(Value::Null, |b| Value::String(values::hex(b))),
            )
        })
        .unzip();
    Some(json!({"keys": keys, "values": vals}))
}

/// A content file as Appendix C JSON. Metrics are written when decoded and
/// `with_stats` asks for them.
pub fn content_file_json(file: &FileRef, with_stats: bool) -> Result<Value> {
    let m = &file.manifest;
    let row = file.row();
    let mut o = Map::new();
    o.insert("spec-id".into(), json!(file.spec_id()));
    o.insert("content".into(), json!(m.content(row)?.json_name()));
    o.insert("file-path".into(), json!(file.path()));
    o.insert(
        "file-format".into(),
        json!(format_name(m.file_format.value(row))),
    );
    o.insert("partition".into(), partition_json(file)?);
    o.insert("file-size-in-bytes".into(), json!(file.file_size()));
    o.insert("record-count".into(), json!(file.record_count()));
    if with_stats {
        let maps = [
            ("column-sizes", long_map(&m.column_sizes, row)),
            ("value-counts", long_map(&m.value_counts, row)),
            ("null-value-counts", long_map(&m.null_value_counts, row)),
            ("nan-value-counts", long_map(&m.nan_value_counts, row)),
            ("lower-bounds", bytes_map(&m.lower_bounds, row)),
            ("upper-bounds", bytes_map(&m.upper_bounds, row)),
        ];
        for (name, value) in maps {
            if let Some(v) = value {
                o.insert(name.into(), v);
            }
        }
    }
    if let Some(key) = m
        .key_metadata
        .as_ref()
        .filter(|c| arrow_array::Array::is_valid(*c, row))
    {
        o.insert("key-metadata".into(), json!(values::hex(key.value(row))));
    }
    if let Some(offsets) = m.split_offsets(row) {
        o.insert("split-offsets".into(), json!(offsets));
    }
    if m.equality_ids
        .as_ref()
        .is_some_and(|c| arrow_array::Array::is_valid(c.as_ref(), row))
    {
        o.insert("equality-ids".into(), json!(m.equality_ids(row)));
    }
    let opt_i32 = |c: &Option<arrow_array::Int32Array>| {
        c.as_ref()
            .filter(|c| arrow_array::Array::is_valid(*c, row))
            .map(|c| c.value(row))
    };
    let opt_i64 = |c: &Option<arrow_array::Int64Array>| {
        c.as_ref()
            .filter(|c| arrow_array::Array::is_valid(*c, row))
            .map(|c| c.value(row))
    };
    if let Some(id) = opt_i32(&m.sort_order_id) {
        o.insert("sort-order-id".into(), json!(id));
    }
    if let Some(id) = opt_i64(&m.first_row_id) {
        o.insert("first-row-id".into(), json!(id));
    }
    if let Some(path) = m.referenced_data_file(row) {
        o.insert("referenced-data-file".into(), json!(path));
    }
    if let Some(v) = opt_i64(&m.content_offset) {
        o.insert("content-offset".into(), json!(v));
    }
    if let Some(v) = opt_i64(&m.content_size) {
        o.insert("content-size-in-bytes".into(), json!(v));
    }
    Ok(Value::Object(o))
}

/// A file scan task as Appendix C JSON: the scan's schema, the data file's
/// spec, the data file, the byte range, its delete files and residual.
#[allow(clippy::too_many_arguments)]
pub fn task_json(
    schema: &Value,
    data: &FileRef,
    deletes: &[&FileRef],
    residual: &Bound,
    start: i64,
    length: i64,
    with_stats: bool,
) -> Result<Value> {
    let delete_files = deletes
        .iter()
        // Delete files carry their stats: the reader filters with them.
        .map(|d| content_file_json(d, true))
        .collect::<Result<Vec<_>>>()?;
    // `task-type` first, as Java's public ScanTaskParser writes it.
    Ok(json!({
        "task-type": "file-scan-task",
        "schema": schema,
        "spec": data.manifest.spec.to_json(),
        "data-file": content_file_json(data, with_stats)?,
        "start": start,
        "length": length,
        "delete-files": delete_files,
        "residual-filter": expr_json::to_json(residual),
    }))
}
