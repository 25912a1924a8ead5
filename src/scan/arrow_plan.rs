//! A plan as one Arrow record batch (`DataScan.plan_arrow`): one row per
//! planned data file, its delete files as a list of structs, its residual
//! as expression JSON. For callers that want columns rather than objects.

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

use super::files::{Content, FileRef};
use super::planner::PlannedFile;
use crate::error::{Error, Result};
use crate::expr::json as expr_json;

fn delete_fields() -> Fields {
    Fields::from(vec![
        Field::new("file_path", DataType::Utf8, false),
        Field::new("content", DataType::Int32, false),
        Field::new("file_format", DataType::Utf8, false),
        Field::new("record_count", DataType::Int64, false),
        Field::new("file_size_in_bytes", DataType::Int64, false),
        Field::new("data_sequence_number", DataType::Int64, false),
        Field::new("referenced_data_file", DataType::Utf8, true),
        Field::new("content_offset", DataType::Int64, true),
        Field::new("content_size_in_bytes", DataType::Int64, true),
    ])
}

/// The schema of [`plan_batch`].
pub fn plan_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("file_path", DataType::Utf8, false),
        Field::new("file_format", DataType::Utf8, false),
        Field::new("spec_id", DataType::Int32, false),
        Field::new("record_count", DataType::Int64, false),
        Field::new("file_size_in_bytes", DataType::Int64, false),
        Field::new("data_sequence_number", DataType::Int64, false),
        Field::new(
            "delete_files",
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(delete_fields()),
                true,
            ))),
            false,
        ),
        Field::new("residual", DataType::Utf8, false),
    ]))
}

fn append_delete(builder: &mut StructBuilder, file: &FileRef) -> Result<()> {
    let m = &file.manifest;
    let row = file.row();
    let code = match m.content(row)? {
        Content::Data => 0,
        Content::PositionDeletes => 1,
        Content::EqualityDeletes => 2,
    };
    let opt = |c: &Option<arrow_array::Int64Array>| {
        c.as_ref()
            .and_then(|c| arrow_array::Array::is_valid(c, row).then(|| c.value(row)))
    };
    macro_rules! field {
        ($i:expr, $t:ty) => {
            builder
                .field_builder::<$t>($i)
                .ok_or_else(|| Error::Internal("plan_arrow builder".to_owned()))?
        };
    }
    field!(0, StringBuilder).append_value(file.path());
    field!(1, Int32Builder).append_value(code);
    field!(2, StringBuilder).append_value(m.file_format.value(row));
    field!(3, Int64Builder).append_value(file.record_count());
    field!(4, Int64Builder).append_value(file.file_size());
    field!(5, Int64Builder).append_value(file.data_sequence_number());
    field!(6, StringBuilder).append_option(m.referenced_data_file(row));
    field!(7, Int64Builder).append_option(opt(&m.content_offset));
    field!(8, Int64Builder).append_option(opt(&m.content_size));
    builder.append(true);
    Ok(())
}

/// The plan of `files` as one batch of [`plan_schema`]; `delete_files` is
/// the plan's table of delete files.
pub fn plan_batch(files: &[PlannedFile], delete_files: &[FileRef]) -> Result<RecordBatch> {
    let mut paths = StringBuilder::new();
    let mut formats = StringBuilder::new();
    let mut specs = Int32Builder::new();
    let mut records = Int64Builder::new();
    let mut sizes = Int64Builder::new();
    let mut seqs = Int64Builder::new();
    let mut deletes = ListBuilder::new(StructBuilder::from_fields(delete_fields(), 0));
    let mut residuals = StringBuilder::new();
    for planned in files {
        let f = &planned.file;
        paths.append_value(f.path());
        formats.append_value(f.manifest.file_format.value(f.row()));
        specs.append_value(f.spec_id());
        records.append_value(f.record_count());
        sizes.append_value(f.file_size());
        seqs.append_value(f.data_sequence_number());
        for d in planned.delete_files(delete_files) {
            append_delete(deletes.values(), d)?;
        }
        deletes.append(true);
        residuals.append_value(expr_json::to_json(&planned.residual).to_string());
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(paths.finish()),
        Arc::new(formats.finish()),
        Arc::new(specs.finish()),
        Arc::new(records.finish()),
        Arc::new(sizes.finish()),
        Arc::new(seqs.finish()),
        Arc::new(deletes.finish()),
        Arc::new(residuals.finish()),
    ];
    RecordBatch::try_new(plan_schema(), columns)
        .map_err(|e| Error::Internal(format!("plan_arrow: {e}")))
}
