//! Decoded manifests as the planner keeps them, and views of one file
//! (data or delete) inside them. Files are never copied out of the Arrow
//! columns: a [`FileRef`] is a manifest and a row.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, MapArray, RecordBatch, StringArray,
    StructArray,
};
use arrow_row::{RowConverter, Rows, SortField};

use crate::error::{Error, Result};
use crate::spec::partition::PartitionSpec;
use crate::types::Type;

/// The field id of `file_path` in position delete files (spec: "Reserved
/// Field IDs"); its bounds say which data files a delete file covers.
pub const DELETE_FILE_PATH_ID: i32 = 2_147_483_546;

/// `data_file.content` (spec: "Manifests").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    Data,
    PositionDeletes,
    EqualityDeletes,
}

impl Content {
    pub fn from_code(code: i32) -> Result<Content> {
        match code {
            0 => Ok(Content::Data),
            1 => Ok(Content::PositionDeletes),
            2 => Ok(Content::EqualityDeletes),
            other => Err(Error::InvalidData(format!(
                "data_file.content {other} is not 0 (data), 1 (position deletes) or 2 \
                 (equality deletes)"
            ))),
        }
    }

    /// The name in Appendix C JSON.
    pub fn json_name(self) -> &'static str {
        match self {
            Content::Data => "DATA",
            Content::PositionDeletes => "POSITION_DELETES",
            Content::EqualityDeletes => "EQUALITY_DELETES",
        }
    }
}

/// A metrics map column (`value_counts`, `lower_bounds`, ...), if decoded.
#[derive(Debug, Clone)]
pub struct MetricMap {
    offsets: Vec<i32>,
    keys: Int32Array,
    values: ArrayRef,
    map: MapArray,
}

impl MetricMap {
    fn new(map: &MapArray) -> Self {
        MetricMap {
            offsets: map.value_offsets().to_vec(),
            keys: map.keys().as_primitive::<Int32Type>().clone(),
            values: map.values().clone(),
            map: map.clone(),
        }
    }

    /// The entry index of `field_id` in `row`'s map.
    fn find(&self, row: usize, field_id: i32) -> Option<usize> {
        if self.map.is_null(row) {
            return None;
        }
        let (start, end) = (self.offsets[row] as usize, self.offsets[row + 1] as usize);
        (start..end).find(|&i| self.keys.value(i) == field_id)
    }

    pub fn long(&self, row: usize, field_id: i32) -> Option<i64> {
        let values = self.values.as_primitive_opt::<Int64Type>()?;
        self.find(row, field_id)
            .filter(|&i| values.is_valid(i))
            .map(|i| values.value(i))
    }

    pub fn bytes(&self, row: usize, field_id: i32) -> Option<&[u8]> {
        let values = self.values.as_binary_opt::<i32>()?;
        self.find(row, field_id)
            .filter(|&i| values.is_valid(i))
            .map(|i| values.value(i))
    }

    /// Every (field id, entry index) of `row`.
    pub fn entries(&self, row: usize) -> impl Iterator<Item = (i32, usize)> + '_ {
        let range = if self.map.is_null(row) {
            0..0
        } else {
            self.offsets[row] as usize..self.offsets[row + 1] as usize
        };
        range.map(|i| (self.keys.value(i), i))
    }

    pub fn long_at(&self, index: usize) -> Option<i64> {
        let values = self.values.as_primitive_opt::<Int64Type>()?;
        values.is_valid(index).then(|| values.value(index))
    }

    pub fn bytes_at(&self, index: usize) -> Option<&[u8]> {
        let values = self.values.as_binary_opt::<i32>()?;
        values.is_valid(index).then(|| values.value(index))
    }

    pub fn is_null(&self, row: usize) -> bool {
        self.map.is_null(row)
    }
}

/// One decoded manifest: its entries with inheritance applied, and typed
/// views of the columns the planner reads.
#[derive(Debug)]
pub struct ManifestData {
    pub path: String,
    pub spec: Arc<PartitionSpec>,
    pub partition_type: Type,
    pub batch: RecordBatch,
    pub data_file: StructArray,
    pub status: Int32Array,
    /// The data sequence number of each entry (inherited for ADDED ones).
    pub sequence_number: Int64Array,
    pub file_sequence_number: Option<Int64Array>,
    pub content: Option<Int32Array>,
    pub file_path: StringArray,
    pub file_format: StringArray,
    pub partition: StructArray,
    pub record_count: Int64Array,
    pub file_size: Int64Array,
    pub column_sizes: Option<MetricMap>,
    pub value_counts: Option<MetricMap>,
    pub null_value_counts: Option<MetricMap>,
    pub nan_value_counts: Option<MetricMap>,
    pub lower_bounds: Option<MetricMap>,
    pub upper_bounds: Option<MetricMap>,
    pub key_metadata: Option<BinaryArray>,
    pub split_offsets: Option<ArrayRef>,
    pub equality_ids: Option<ArrayRef>,
    pub sort_order_id: Option<Int32Array>,
    pub first_row_id: Option<Int64Array>,
    pub referenced_data_file: Option<StringArray>,
    pub content_offset: Option<Int64Array>,
    pub content_size: Option<Int64Array>,
    /// Comparable bytes of each entry's partition tuple (arrow-row), for
    /// equality lookups in the delete index.
    partition_keys: Option<Rows>,
}

fn child<'a>(array: &'a StructArray, name: &str, manifest: &str) -> Result<&'a ArrayRef> {
    array.column_by_name(name).ok_or_else(|| {
        Error::Internal(format!(
            "manifest {manifest}: column {name} was not decoded"
        ))
    })
}

impl ManifestData {
    /// Entries that did not come from a manifest file (task JSON, a conflict
    /// check's files) as a manifest of `spec`, typed by `schema`; `label`
    /// names them in errors.
    pub fn of_spec(
        label: &str,
        spec: Arc<PartitionSpec>,
        schema: &crate::spec::schema::Schema,
        batch: RecordBatch,
    ) -> Result<Arc<Self>> {
        let partition_type = spec.partition_type(schema)?;
        Ok(Arc::new(ManifestData::new(
            label.to_owned(),
            spec,
            partition_type,
            batch,
            false,
        )?))
    }

    /// Wraps a batch from `read_manifest_as` (which must include `status`,
    /// the sequence numbers and the data_file columns the planner reads).
    pub fn new(
        path: String,
        spec: Arc<PartitionSpec>,
        partition_type: Type,
        batch: RecordBatch,
        with_partition_keys: bool,
    ) -> Result<Self> {
        let entries = StructArray::from(batch.clone());
        let p = path.as_str();
        let data_file = child(&entries, "data_file", p)?.as_struct().clone();
        let opt = |name: &str| data_file.column_by_name(name).cloned();
        let opt_i32 = |name: &str| opt(name).map(|c| c.as_primitive::<Int32Type>().clone());
        let opt_i64 = |name: &str| opt(name).map(|c| c.as_primitive::<Int64Type>().clone());
        let opt_map = |name: &str| opt(name).map(|c| MetricMap::new(c.as_map()));
        let opt_str = |name: &str| opt(name).map(|c| c.as_string::<i32>().clone());
        let sequence_number = child(&entries, "sequence_number", p)?
            .as_primitive::<Int64Type>()
            .clone();
        let partition = child(&data_file, "partition", p)?.as_struct().clone();
        let partition_keys = if with_partition_keys && partition.num_columns() > 0 {
            let fields: Vec<SortField> = partition
                .columns()
                .iter()
                .map(|c| SortField::new(c.data_type().clone()))
                .collect();
            let converter = RowConverter::new(fields)
                .map_err(|e| Error::Internal(format!("partition keys: {e}")))?;
            Some(
                converter
                    .convert_columns(partition.columns())
                    .map_err(|e| Error::Internal(format!("partition keys: {e}")))?,
            )
        } else {
            None
        };
        Ok(ManifestData {
            status: child(&entries, "status", p)?
                .as_primitive::<Int32Type>()
                .clone(),
            file_sequence_number: entries
                .column_by_name("file_sequence_number")
                .map(|c| c.as_primitive::<Int64Type>().clone()),
            sequence_number,
            content: opt_i32("content"),
            file_path: child(&data_file, "file_path", p)?
                .as_string::<i32>()
                .clone(),
            file_format: child(&data_file, "file_format", p)?
                .as_string::<i32>()
                .clone(),
            record_count: child(&data_file, "record_count", p)?
                .as_primitive::<Int64Type>()
                .clone(),
            file_size: child(&data_file, "file_size_in_bytes", p)?
                .as_primitive::<Int64Type>()
                .clone(),
            column_sizes: opt_map("column_sizes"),
            value_counts: opt_map("value_counts"),
            null_value_counts: opt_map("null_value_counts"),
            nan_value_counts: opt_map("nan_value_counts"),
            lower_bounds: opt_map("lower_bounds"),
            upper_bounds: opt_map("upper_bounds"),
            key_metadata: opt("key_metadata").map(|c| c.as_binary::<i32>().clone()),
            split_offsets: opt("split_offsets"),
            equality_ids: opt("equality_ids"),
            sort_order_id: opt_i32("sort_order_id"),
            first_row_id: opt_i64("first_row_id"),
            referenced_data_file: opt_str("referenced_data_file"),
            content_offset: opt_i64("content_offset"),
            content_size: opt_i64("content_size_in_bytes"),
            partition,
            partition_keys,
            data_file,
            batch,
            spec,
            partition_type,
            path,
        })
    }

    pub fn len(&self) -> usize {
        self.batch.num_rows()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Status 2 (DELETED) entries are not part of the snapshot.
    pub fn is_live(&self, row: usize) -> bool {
        self.status.value(row) != 2
    }

    pub fn content(&self, row: usize) -> Result<Content> {
        match &self.content {
            Some(c) if c.is_valid(row) => Content::from_code(c.value(row)),
            // v1 manifests have no content column: data files.
            _ => Ok(Content::Data),
        }
    }

    /// The entry's data sequence number. Inheritance has run, so a null is
    /// a file the spec says must carry one.
    pub fn data_sequence_number(&self, row: usize) -> Result<i64> {
        if self.sequence_number.is_valid(row) {
            Ok(self.sequence_number.value(row))
        } else {
            Err(Error::InvalidData(format!(
                "manifest {}: entry for {} has no data sequence number",
                self.path,
                self.file_path.value(row)
            )))
        }
    }

    pub fn partition_key(&self, row: usize) -> &[u8] {
        match &self.partition_keys {
            Some(rows) => rows.row(row).data(),
            None => &[],
        }
    }

    pub fn referenced_data_file(&self, row: usize) -> Option<&str> {
        self.referenced_data_file
            .as_ref()
            .filter(|c| c.is_valid(row))
            .map(|c| c.value(row))
    }

    pub fn equality_ids(&self, row: usize) -> Vec<i32> {
        let Some(column) = &self.equality_ids else {
            return Vec::new();
        };
        let list = column.as_list::<i32>();
        if list.is_null(row) {
            return Vec::new();
        }
        let values = list.value(row);
        values.as_primitive::<Int32Type>().values().to_vec()
    }

    pub fn split_offsets(&self, row: usize) -> Option<Vec<i64>> {
        let list = self.split_offsets.as_ref()?.as_list::<i32>();
        if list.is_null(row) {
            return None;
        }
        Some(
            list.value(row)
                .as_primitive::<Int64Type>()
                .values()
                .to_vec(),
        )
    }

    /// A file-scoped position delete file names its data file by
    /// `referenced_data_file` or by equal `file_path` bounds (Java's
    /// `ContentFileUtil.referencedDataFileLocation`).
    pub fn referenced_location(&self, row: usize) -> Option<&str> {
        if let Some(path) = self.referenced_data_file(row) {
            return Some(path);
        }
        let lower = self
            .lower_bounds
            .as_ref()?
            .bytes(row, DELETE_FILE_PATH_ID)?;
        let upper = self
            .upper_bounds
            .as_ref()?
            .bytes(row, DELETE_FILE_PATH_ID)?;
        if lower == upper {
            std::str::from_utf8(lower).ok()
        } else {
            None
        }
    }

    /// Whether a position delete entry is a v3 deletion vector (Java's
    /// `ContentFileUtil.isDV`: a Puffin file).
    pub fn is_dv(&self, row: usize) -> bool {
        self.file_format.value(row).eq_ignore_ascii_case("puffin")
    }
}

/// One file of a decoded manifest.
#[derive(Debug, Clone)]
pub struct FileRef {
    pub manifest: Arc<ManifestData>,
    pub row: u32,
}

impl FileRef {
    pub fn new(manifest: &Arc<ManifestData>, row: usize) -> Self {
        FileRef {
            manifest: manifest.clone(),
            row: row as u32,
        }
    }

    pub fn row(&self) -> usize {
        self.row as usize
    }

    pub fn path(&self) -> &str {
        self.manifest.file_path.value(self.row())
    }

    pub fn spec_id(&self) -> i32 {
        self.manifest.spec.spec_id
    }

    pub fn data_sequence_number(&self) -> i64 {
        // Checked when the file entered the plan.
        self.manifest.sequence_number.value(self.row())
    }

    pub fn file_size(&self) -> i64 {
        self.manifest.file_size.value(self.row())
    }

    pub fn record_count(&self) -> i64 {
        self.manifest.record_count.value(self.row())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_codes() {
        assert_eq!(Content::from_code(2).unwrap(), Content::EqualityDeletes);
        assert!(Content::from_code(3).is_err());
        assert_eq!(Content::PositionDeletes.json_name(), "POSITION_DELETES");
    }
}
