//! Avro data files (spec: Appendix A, "Avro") decoded into Arrow.
//!
//! The reader hands the file's own columns to the shared projection code
//! (`python/frazil/table/_arrow_project.py`), as it does for Parquet: the
//! Arrow schema of [`DataFile::arrow_schema`] carries each field's Iceberg id
//! as Parquet-style field metadata (`PARQUET:field_id`), also on list
//! elements and map keys and values, and [`DataFile::read`] decodes the
//! chosen top-level columns with the Avro decoder the manifests use, which
//! skips the others without decoding them.

pub mod types;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef};

use crate::avro::binary::Cursor;
use crate::avro::columns::arrow_type;
use crate::avro::container::{read_header, Header};
use crate::avro::{in_file, plan_for, Codec};
use crate::error::{Error, Result};
use crate::types::{NestedField, Type};

/// The metadata key Parquet readers put a field id under (pyarrow's name).
pub const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// Avro's sync marker length.
const SYNC_SIZE: usize = 16;

/// One Avro data file held in memory, its header parsed.
pub struct DataFile {
    location: String,
    data: Vec<u8>,
    header: Header,
    fields: Vec<NestedField>,
}

impl DataFile {
    /// Parses the header and the Iceberg fields of the file `data` (read from
    /// `location`, which errors name).
    pub fn open(location: &str, data: Vec<u8>) -> Result<DataFile> {
        let header = read_header(&data).map_err(in_file(location))?;
        let fields = types::file_fields(&header.schema_json).map_err(in_file(location))?;
        Ok(DataFile {
            location: location.to_owned(),
            data,
            header,
            fields,
        })
    }

    /// The file's length in bytes.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// The file's Iceberg fields (those with a `field-id`).
    pub fn fields(&self) -> &[NestedField] {
        &self.fields
    }

    /// The Arrow schema of the file's fields with their ids as field
    /// metadata; [`DataFile::read`]'s batches have these columns (or those
    /// chosen).
    pub fn arrow_schema(&self) -> SchemaRef {
        Arc::new(ArrowSchema::new(
            self.fields.iter().map(with_id).collect::<Vec<_>>(),
        ))
    }

    /// The records whose block starts in the byte range `[start, start +
    /// length)` (a split: Java's Avro reader owns the blocks whose preceding
    /// sync marker starts in its range), of the top-level fields with ids
    /// `columns` (all when `None`), and the position in the file of the
    /// first record returned.
    pub fn read(
        &self,
        start: u64,
        length: u64,
        columns: Option<&[i32]>,
    ) -> Result<(u64, RecordBatch)> {
        self.read_inner(start, length, columns)
            .map_err(in_file(&self.location))
    }

    fn read_inner(
        &self,
        start: u64,
        length: u64,
        columns: Option<&[i32]>,
    ) -> Result<(u64, RecordBatch)> {
        let chosen: Vec<NestedField> = match columns {
            None => self.fields.clone(),
            Some(ids) => {
                for id in ids {
                    if !self.fields.iter().any(|f| f.id == *id) {
                        return Err(Error::UnknownField(format!(
                            "field id {id} is not a top-level field of the data file"
                        )));
                    }
                }
                self.fields
                    .iter()
                    .filter(|f| ids.contains(&f.id))
                    .cloned()
                    .collect()
            }
        };
        let read_type = Type::Struct(chosen.clone());
        let plan = plan_for(&self.header, &read_type)?;
        let mut builders = plan.builders();
        let mut scratch = Vec::new();
        let first_row = self.blocks_in(start, length, |count, block| {
            let plain: &[u8] = if self.header.codec == Codec::Null {
                block
            } else {
                let n = self.header.codec.decompress_into(block, &mut scratch)?;
                scratch.get(..n).unwrap_or(&[])
            };
            plan.decode_block(plain, count, &mut builders)
        })?;
        let rows = plan.finish(&mut builders)?;
        let num_rows = rows.len();
        let (_, arrays, _) = rows.into_parts();
        // The batch keeps the decoder's nested types (no ids below the top level: a
        // RecordBatch wants its columns' types exactly); [`DataFile::arrow_schema`] has them.
        let schema = Arc::new(ArrowSchema::new(
            chosen
                .iter()
                .zip(&arrays)
                .map(|(f, a)| {
                    Field::new(f.name.clone(), a.data_type().clone(), true)
                        .with_metadata(id_metadata(f.id))
                })
                .collect::<Vec<_>>(),
        ));
        let batch = RecordBatch::try_new_with_options(
            schema,
            arrays,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(num_rows)),
        )
        .map_err(|e| Error::Internal(format!("decoded Avro columns do not fit: {e}")))?;
        Ok((first_row, batch))
    }

    /// The position of the first record the byte range `[start, start +
    /// length)` owns and how many records it owns, from the block headers
    /// alone (nothing is decompressed).
    pub fn rows_in(&self, start: u64, length: u64) -> Result<(u64, u64)> {
        let mut rows = 0u64;
        let first = self
            .blocks_in(start, length, |count, _| {
                rows += count as u64;
                Ok(())
            })
            .map_err(in_file(&self.location))?;
        Ok((first, rows))
    }

    /// Runs `f` on `(record count, compressed block)` of each block whose
    /// preceding sync marker starts in `[start, start + length)`, as Java's
    /// Avro reader assigns blocks to splits (`sync(start)`, then blocks until
    /// `pastSync(end)`); returns the position of the first record of those
    /// blocks (the records of earlier blocks counted).
    fn blocks_in(
        &self,
        start: u64,
        length: u64,
        mut f: impl FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<u64> {
        let end = start.saturating_add(length);
        let mut cursor = Cursor::new(&self.data);
        // The body starts right after the header's sync marker.
        cursor.read_fixed(self.header.body_start)?;
        let mut skipped = 0u64;
        while !cursor.is_empty() {
            let marker = (cursor.position() - SYNC_SIZE) as u64;
            let count = cursor.read_long()?;
            let size = cursor.read_long()?;
            let count = usize::try_from(count)
                .map_err(|_| Error::InvalidData(format!("negative Avro block count {count}")))?;
            let size = usize::try_from(size)
                .map_err(|_| Error::InvalidData(format!("negative Avro block size {size}")))?;
            let block = cursor.read_fixed(size)?;
            if cursor.read_fixed(SYNC_SIZE)? != self.header.sync {
                return Err(Error::InvalidData(
                    "Avro sync marker mismatch (corrupt block)".to_owned(),
                ));
            }
            if marker >= end {
                break;
            }
            if marker < start {
                skipped += count as u64;
                continue;
            }
            f(count, block)?;
        }
        Ok(skipped)
    }
}

fn id_metadata(id: i32) -> HashMap<String, String> {
    HashMap::from([(FIELD_ID_KEY.to_owned(), id.to_string())])
}

/// The Arrow field of an Iceberg field, as the decoder builds its column
/// (every field nullable, as the decoder's types are), with ids attached.
fn with_id(field: &NestedField) -> Field {
    Field::new(field.name.clone(), typed(&field.field_type), true)
        .with_metadata(id_metadata(field.id))
}

fn typed(ty: &Type) -> DataType {
    match ty {
        Type::Struct(fields) => DataType::Struct(fields.iter().map(with_id).collect::<Fields>()),
        Type::List {
            element_id,
            element,
            ..
        } => DataType::List(Arc::new(
            Field::new("item", typed(element), true).with_metadata(id_metadata(*element_id)),
        )),
        Type::Map {
            key_id,
            key,
            value_id,
            value,
            ..
        } => {
            let entries = Fields::from(vec![
                Field::new("key", typed(key), false).with_metadata(id_metadata(*key_id)),
                Field::new("value", typed(value), true).with_metadata(id_metadata(*value_id)),
            ]);
            DataType::Map(
                Arc::new(Field::new("entries", DataType::Struct(entries), false)),
                false,
            )
        }
        other => arrow_type(other),
    }
}

#[cfg(test)]
mod tests;
