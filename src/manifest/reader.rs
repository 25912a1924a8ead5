//! Reading manifests into Arrow (spec: "Manifests", "Manifest Entry Fields",
//! "Sequence Number Inheritance"), with column projection and the metadata
//! inherited from the manifest list already applied.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StructArray};
use arrow_schema::Schema as ArrowSchema;

use super::project::{parse_paths, prune, replace_child, select, touches};
use super::schema::entry_read_fields;
use crate::avro::schema::Schema as AvroSchema;
use crate::avro::{self, container, Header, Plan};
use crate::error::{Error, Result};
use crate::memo::Memo;
use crate::spec::partition::{partition_type_of, PartitionSpec};
use crate::types::{NestedField, PrimitiveType, Type};

/// What a manifest's entries inherit from its manifest-list entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inherit {
    /// `added_snapshot_id`: replaces null entry snapshot ids.
    pub snapshot_id: Option<i64>,
    /// The manifest's `sequence_number` (0 for v1 manifest lists).
    pub sequence_number: i64,
    /// The manifest's `first_row_id` (v3): assigned to live files in order.
    pub first_row_id: Option<i64>,
}

/// The Avro key-value metadata that describes a manifest.
pub const MANIFEST_KEYS: [&str; 6] = [
    "schema",
    "schema-id",
    "partition-spec",
    "partition-spec-id",
    "format-version",
    "content",
];

/// Reads a whole file through the process's default [`FileIO`](crate::io::FileIO)
/// (no properties: local paths, `file:` URIs, and object stores configured
/// from the environment). The planner's `ReadFile` shape; a caller with a
/// configured FileIO uses [`FileIO::read_fn`](crate::io::FileIO::read_fn).
pub fn read_location(location: &str) -> Result<Vec<u8>> {
    crate::io::default_file_io().read(location)
}

/// The partition type of a manifest: from its `partition-spec` and `schema`
/// metadata (the spec and schema it was written with), or, for files that
/// carry neither, from the Avro writer schema. Metadata that is present but
/// does not parse is an error, never a reason to guess from Avro.
pub fn manifest_partition_type(header: &Header) -> Result<Type> {
    let spec = header.meta_str("partition-spec");
    let schema = header.meta_str("schema");
    match (spec, schema) {
        (Some(spec), Some(schema)) => partition_type_of(spec, schema),
        (Some(spec), None) => {
            let spec = PartitionSpec::parse(spec, 0)?;
            if spec.fields.is_empty() {
                Ok(Type::Struct(Vec::new()))
            } else {
                Err(Error::InvalidData(
                    "manifest has partition-spec metadata but no schema to type it".to_owned(),
                ))
            }
        }
        (None, _) => avro_partition_type(&header.schema),
    }
}

fn avro_partition_type(schema: &AvroSchema) -> Result<Type> {
    let record_field = |schema: &AvroSchema, id: i32| -> Option<AvroSchema> {
        let AvroSchema::Record(r) = schema else {
            return None;
        };
        r.fields
            .iter()
            .find(|f| f.field_id == Some(id))
            .map(|f| f.schema.clone())
    };
    let partition = record_field(schema, 2)
        .and_then(|df| record_field(&df, 102))
        .ok_or_else(|| {
            Error::InvalidData("manifest has no data_file.partition field".to_owned())
        })?;
    let AvroSchema::Record(record) = partition else {
        return Err(Error::InvalidData(
            "data_file.partition is not a record".to_owned(),
        ));
    };
    let mut fields = Vec::new();
    for f in &record.fields {
        let inner = f.schema.as_optional().map(|(_, s)| s).unwrap_or(&f.schema);
        let logical = |l: &Option<String>, name: &str| l.as_deref() == Some(name);
        let ty = match inner {
            AvroSchema::Boolean => PrimitiveType::Boolean,
            AvroSchema::Int { logical: l } if logical(l, "date") => PrimitiveType::Date,
            AvroSchema::Int { .. } => PrimitiveType::Int,
            AvroSchema::Long { logical: l } if logical(l, "time-micros") => PrimitiveType::Time,
            AvroSchema::Long { logical: l } if logical(l, "timestamp-micros") => {
                PrimitiveType::Timestamp
            }
            AvroSchema::Long { .. } => PrimitiveType::Long,
            AvroSchema::Float => PrimitiveType::Float,
            AvroSchema::Double => PrimitiveType::Double,
            AvroSchema::String { .. } => PrimitiveType::String,
            AvroSchema::Bytes { .. } => PrimitiveType::Binary,
            AvroSchema::Fixed {
                size: 16,
                logical: l,
            } if logical(l, "uuid") => PrimitiveType::Uuid,
            AvroSchema::Fixed {
                size,
                logical: None,
            } => PrimitiveType::Fixed(*size as u64),
            other => {
                return Err(Error::InvalidData(format!(
                    "partition field {} ({}) needs the partition-spec metadata to be typed",
                    f.name,
                    other.kind()
                )))
            }
        };
        let id = f.field_id.ok_or_else(|| {
            Error::InvalidData(format!(
                "partition field {} has no field-id and the manifest has no partition-spec \
                 metadata to number it",
                f.name
            ))
        })?;
        fields.push(NestedField::optional(id, &f.name, Type::Primitive(ty)));
    }
    Ok(Type::Struct(fields))
}

/// The format version a manifest declares (v1 writers may omit it).
pub fn format_version(header: &Header) -> Result<u8> {
    match header.meta_str("format-version") {
        None => Ok(1),
        Some(v) => v
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|v| (1..=4).contains(v))
            .ok_or_else(|| Error::InvalidData(format!("unsupported format-version {v:?}"))),
    }
}

/// Decodes the manifest in `data` (read from `location`, named in errors).
/// `columns` are top-level or dotted names; `None` reads everything.
/// With `inherit`, null snapshot ids and sequence numbers are inherited
/// (spec: "Sequence Number Inheritance"); v1 files default them to 0.
pub fn read_manifest(
    data: &[u8],
    location: &str,
    columns: Option<&[String]>,
    inherit: Option<Inherit>,
) -> Result<RecordBatch> {
    read_manifest_inner(data, columns, inherit, None, None).map_err(avro::in_file(location))
}

/// [`read_manifest`] with the partition tuple read as `partition_type`
/// instead of the type the file's own metadata gives: a scan reads every
/// manifest of a spec with the table's partition type for that spec (as
/// Java's `ManifestReader` does with `specsById`), so that values of a
/// promoted identity column compare equal across manifests.
///
/// With `metric_keys`, the metrics maps (`column_sizes` ... `upper_bounds`)
/// hold only the entries of those field ids: a scan decodes the metrics of
/// the columns its filter reads, not of every column.
pub fn read_manifest_as(
    data: &[u8],
    location: &str,
    partition_type: &Type,
    columns: Option<&[String]>,
    inherit: Option<Inherit>,
    metric_keys: Option<&[i32]>,
) -> Result<RecordBatch> {
    read_manifest_inner(data, columns, inherit, Some(partition_type), metric_keys)
        .map_err(avro::in_file(location))
}

/// What is derived from a manifest's metadata and the caller's columns:
/// the same for every manifest of a table that a query reads.
struct Prepared {
    /// The fields returned.
    requested: Vec<NestedField>,
    /// The decode plan for the fields decoded (the requested ones and what
    /// inheritance needs).
    plan: Arc<Plan>,
    /// The bound lengths of the table's columns by field id; `None` when
    /// the manifest carries no table schema (old writers).
    bounds: Option<Vec<BoundRule>>,
}

/// Avro writer schema, `partition-spec` and `schema` metadata, format
/// version, requested columns, whether first row ids are assigned, and the
/// caller's partition type (its debug text), if any, and the metrics keys
/// kept (all when None).
type PreparedKey = (
    String,
    Option<String>,
    Option<String>,
    u8,
    Option<Vec<String>>,
    bool,
    Option<String>,
    Option<Vec<i32>>,
);

static PREPARED: Memo<PreparedKey, Arc<Prepared>> = Memo::new(16);

fn prepare(
    key: &PreparedKey,
    header: &Header,
    partition_type: Option<&Type>,
) -> Result<Arc<Prepared>> {
    let (_, _, schema, _, columns, wants_first_row_id, _, metric_keys) = key;
    let partition_type = match partition_type {
        Some(t) => t.clone(),
        None => manifest_partition_type(header)?,
    };
    let all = entry_read_fields(partition_type);
    let requested = match columns {
        None => all.clone(),
        Some(cols) => select(&all, &parse_paths(cols))?,
    };
    // What inheritance needs besides the requested columns.
    let mut paths = match columns {
        None => parse_paths(&all.iter().map(|f| f.name.clone()).collect::<Vec<_>>()),
        Some(cols) => parse_paths(cols),
    };
    paths.push(vec!["status".to_owned()]);
    if *wants_first_row_id {
        paths.push(vec!["data_file".to_owned(), "record_count".to_owned()]);
    }
    let decoded = Type::Struct(select(&all, &paths)?);
    Ok(Arc::new(Prepared {
        requested,
        plan: Arc::new(match metric_keys {
            None => Plan::compile(&header.schema, &decoded)?,
            Some(keys) => Plan::compile_keeping(&header.schema, &decoded, keys)?,
        }),
        bounds: schema.as_deref().map(bound_rules).transpose()?,
    }))
}

fn read_manifest_inner(
    data: &[u8],
    columns: Option<&[String]>,
    inherit: Option<Inherit>,
    partition_type: Option<&Type>,
    metric_keys: Option<&[i32]>,
) -> Result<RecordBatch> {
    let header = container::read_header(data)?;
    require_field_ids(&header.schema)?;
    let version = format_version(&header)?;
    let inherit = inherit.or(if version == 1 {
        Some(Inherit::default())
    } else {
        None
    });
    let wants_first_row_id = inherit.and_then(|i| i.first_row_id).is_some()
        && columns.is_none_or(|cols| touches(&parse_paths(cols), &["data_file", "first_row_id"]));
    let key = (
        header.schema_json.clone(),
        header.meta_str("partition-spec").map(str::to_owned),
        header.meta_str("schema").map(str::to_owned),
        version,
        columns.map(<[String]>::to_vec),
        wants_first_row_id,
        partition_type.map(|t| format!("{t:?}")),
        metric_keys.map(<[i32]>::to_vec),
    );
    let prepared = PREPARED.get_or_try_insert(key, |key| prepare(key, &header, partition_type))?;
    let array = avro::read_with_plan(data, &header, &prepared.plan)?;
    let array = apply_defaults(array, inherit)?;
    if let Some(rules) = &prepared.bounds {
        check_bounds(&array, rules)?;
    }
    let rows = array.len();
    let array = prune(&array, &prepared.requested)?;
    let metadata: HashMap<String, String> = MANIFEST_KEYS
        .iter()
        .filter_map(|k| header.meta_str(k).map(|v| ((*k).to_owned(), v.to_owned())))
        .collect();
    to_batch(array, rows, metadata)
}

/// A record batch of `array`'s columns (which may be none) with `rows` rows.
pub fn to_batch(
    array: StructArray,
    rows: usize,
    metadata: HashMap<String, String>,
) -> Result<RecordBatch> {
    let (fields, columns, _) = array.into_parts();
    let schema = Arc::new(ArrowSchema::new_with_metadata(fields, metadata));
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| Error::Internal(e.to_string()))
}

fn fill_i64(column: &ArrayRef, mut value: impl FnMut(usize) -> Option<i64>) -> ArrayRef {
    let column = column.as_primitive::<Int64Type>();
    Arc::new(
        (0..column.len())
            .map(|i| {
                if column.is_valid(i) {
                    Some(column.value(i))
                } else {
                    value(i)
                }
            })
            .collect::<Int64Array>(),
    )
}

/// Inheritance and the v1 defaults, on the decoded columns.
fn apply_defaults(array: StructArray, inherit: Option<Inherit>) -> Result<StructArray> {
    let status = array
        .column_by_name("status")
        .ok_or_else(|| Error::Internal("status not decoded".to_owned()))?
        .as_primitive::<Int32Type>()
        .clone();
    if status.null_count() > 0 {
        return Err(Error::InvalidData(
            "manifest entry without a status".to_owned(),
        ));
    }
    if let Some(bad) = status.values().iter().find(|s| !(0..=2).contains(*s)) {
        return Err(Error::InvalidData(format!(
            "invalid manifest entry status {bad}"
        )));
    }
    let mut array = array;
    if let Some(inherit) = inherit {
        if let (Some(column), Some(snapshot_id)) =
            (array.column_by_name("snapshot_id"), inherit.snapshot_id)
        {
            let filled = fill_i64(column, |_| Some(snapshot_id));
            array = replace_child(&array, "snapshot_id", filled)?;
        }
        // Java (InheritableMetadataFactory): inherit when null and the entry
        // is ADDED, or always when the manifest's sequence number is 0 (v1).
        let seq = inherit.sequence_number;
        for name in ["sequence_number", "file_sequence_number"] {
            if let Some(column) = array.column_by_name(name) {
                let filled = fill_i64(column, |i| {
                    (seq == 0 || status.value(i) == 1).then_some(seq)
                });
                array = replace_child(&array, name, filled)?;
            }
        }
    }
    if let Some(data_file) = array
        .column_by_name("data_file")
        .map(|c| c.as_struct().clone())
    {
        let mut data_file = data_file;
        if let Some(content) = data_file.column_by_name("content") {
            // v1 files are all data files (Appendix E: content defaults to 0).
            let content = content.as_primitive::<Int32Type>();
            let filled: Int32Array = content.iter().map(|v| Some(v.unwrap_or(0))).collect();
            data_file = replace_child(&data_file, "content", Arc::new(filled))?;
        }
        if let (Some(first), Some(records)) = (
            inherit.and_then(|i| i.first_row_id),
            data_file
                .column_by_name("record_count")
                .map(|c| c.as_primitive::<Int64Type>().clone()),
        ) {
            if let Some(column) = data_file.column_by_name("first_row_id") {
                // Java (ManifestReader.idAssigner): live files without a first
                // row id get the next ids, in manifest order.
                let mut next = first;
                let filled = fill_i64(column, |i| {
                    if status.value(i) == 2 {
                        return None;
                    }
                    let id = next;
                    next = next.saturating_add(records.value(i));
                    Some(id)
                });
                data_file = replace_child(&data_file, "first_row_id", filled)?;
            }
        }
        array = replace_child(&array, "data_file", Arc::new(data_file))?;
    }
    Ok(array)
}

/// The byte lengths a column's lower and upper bounds may have (Appendix D).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lengths {
    /// Variable-length values (string, binary; truncated bounds), and the
    /// v3 types whose bounds frazil does not decode (variant, geometry,
    /// geography).
    Any,
    /// A set of lengths below 32: bit `n` allows `n` bytes.
    Set(u32),
    /// Exactly this many bytes (`fixed[L]`).
    Exact(u64),
}

impl Lengths {
    fn of(lengths: &[u32]) -> Self {
        Lengths::Set(lengths.iter().fold(0, |set, n| set | 1 << n))
    }

    fn allows(self, len: usize) -> bool {
        match self {
            Lengths::Any => true,
            Lengths::Set(set) => len < 32 && set & (1 << len) != 0,
            Lengths::Exact(n) => u64::try_from(len).ok() == Some(n),
        }
    }

    fn describe(self) -> String {
        match self {
            Lengths::Any => "any length".to_owned(),
            Lengths::Exact(n) => format!("{n}"),
            Lengths::Set(set) => {
                let lengths: Vec<String> = (0..32)
                    .filter(|n| set & (1 << n) != 0)
                    .map(|n| n.to_string())
                    .collect();
                match lengths.as_slice() {
                    [] => "none (the type has no values)".to_owned(),
                    [one] => one.clone(),
                    [first, .., last] if lengths.len() > 2 => format!("{first} to {last}"),
                    _ => lengths.join(" or "),
                }
            }
        }
    }
}

/// The bound lengths a primitive type allows: its Appendix D width, and the
/// width of the type it may have been promoted from (spec: "Schema
/// Evolution"), whose bounds old files keep: `long` from `int`, `double`
/// from `float`, and (v3) the timestamps from `date`, as
/// [`crate::values::from_bytes`] reads them.
fn bound_lengths(ty: &Type) -> Lengths {
    use PrimitiveType as P;
    let Type::Primitive(p) = ty else {
        return Lengths::Any;
    };
    match p {
        P::Boolean => Lengths::of(&[1]),
        P::Int | P::Date | P::Float => Lengths::of(&[4]),
        P::Long | P::Double => Lengths::of(&[4, 8]),
        P::Time => Lengths::of(&[8]),
        P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs => Lengths::of(&[4, 8]),
        P::Uuid => Lengths::of(&[16]),
        // The minimum bytes of the unscaled value: at most those of the
        // largest value of the precision (fewer when written before a
        // precision was widened).
        P::Decimal { precision, .. } => {
            let most = crate::avro::encode::decimal_bytes(*precision).min(16) as u32;
            Lengths::of(&(1..=most).collect::<Vec<_>>())
        }
        P::Fixed(length) => Lengths::Exact(*length),
        // Always null: no bound is valid.
        P::Unknown => Lengths::Set(0),
        P::String | P::Binary => Lengths::Any,
    }
}

/// What a bound of one column must be: the lengths allowed, and the
/// column's type for the error message.
type BoundRule = Option<(Lengths, Type)>;

/// The bound rule of every primitive column of a table schema (the
/// manifest's `schema` metadata), indexed by field id, nested fields
/// included. A schema that does not parse is an error: without it the
/// bounds cannot be checked, and they would be decoded with guessed widths.
fn bound_rules(schema_json: &str) -> Result<Vec<BoundRule>> {
    fn walk(ty: &Type, id: i32, out: &mut Vec<BoundRule>) {
        match ty {
            Type::Struct(fields) => {
                for f in fields {
                    walk(&f.field_type, f.id, out);
                }
            }
            Type::List {
                element_id,
                element,
                ..
            } => walk(element, *element_id, out),
            Type::Map {
                key_id,
                key,
                value_id,
                value,
                ..
            } => {
                walk(key, *key_id, out);
                walk(value, *value_id, out);
            }
            other => {
                let lengths = bound_lengths(other);
                // Ids are small in practice; a huge one is left unchecked
                // rather than allocating a table that large.
                if let (false, Ok(id)) = (lengths == Lengths::Any, usize::try_from(id)) {
                    if id < 1 << 20 {
                        if out.len() <= id {
                            out.resize(id + 1, None);
                        }
                        out[id] = Some((lengths, other.clone()));
                    }
                }
            }
        }
    }
    let schema = crate::spec::schema::Schema::parse(schema_json).map_err(|e| {
        Error::InvalidData(format!(
            "the manifest's schema metadata does not parse, so its bounds cannot be checked: {e}"
        ))
    })?;
    let mut out = Vec::new();
    walk(&Type::Struct(schema.fields.clone()), 0, &mut out);
    Ok(out)
}

/// Refuses lower and upper bounds whose length does not fit their column's
/// type: decoding them later would read out of bounds or misread them.
fn check_bounds(array: &StructArray, rules: &[BoundRule]) -> Result<()> {
    let Some(data_file) = array.column_by_name("data_file").map(|c| c.as_struct()) else {
        return Ok(());
    };
    for name in ["lower_bounds", "upper_bounds"] {
        let Some(map) = data_file.column_by_name(name).map(|c| c.as_map()) else {
            continue;
        };
        let keys = map.keys().as_primitive::<Int32Type>();
        let values = map.values().as_binary::<i32>();
        let offsets = values.value_offsets();
        for (i, key) in keys.values().iter().enumerate() {
            let Some(Some((lengths, ty))) = usize::try_from(*key).ok().and_then(|k| rules.get(k))
            else {
                continue;
            };
            let len = (offsets[i + 1] - offsets[i]) as usize;
            if values.is_valid(i) && !lengths.allows(len) {
                return Err(Error::InvalidData(format!(
                    "{name} of field {key} ({ty}) has {len} bytes, expected {}",
                    lengths.describe()
                )));
            }
        }
    }
    Ok(())
}

/// Iceberg Avro files carry a field id on every field (Appendix A, "Field
/// IDs"); a file without them is not an Iceberg manifest.
pub fn require_field_ids(schema: &AvroSchema) -> Result<()> {
    let AvroSchema::Record(record) = schema else {
        return Err(Error::InvalidData(format!(
            "Avro schema is a {}, not a record",
            schema.kind()
        )));
    };
    match record.fields.iter().find(|f| f.field_id.is_none()) {
        Some(f) => Err(Error::InvalidData(format!(
            "Avro field {} has no field-id (not an Iceberg schema)",
            f.name
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn bound_lengths_cover_every_type_and_promotion() {
        let rules = bound_rules(
            r#"{"type":"struct","fields":[
                {"id":1,"name":"a","required":false,"type":"timestamp_ns"},
                {"id":2,"name":"b","required":false,"type":"decimal(38, 0)"},
                {"id":3,"name":"c","required":false,"type":{"type":"map","key-id":4,
                  "key":"int","value-id":5,"value-required":false,"value":"fixed[40]"}},
                {"id":6,"name":"d","required":false,"type":"string"}]}"#,
        )
        .unwrap();
        let lengths = |id: usize| rules[id].as_ref().map(|(l, _)| *l);
        assert!(lengths(1).unwrap().allows(8) && lengths(1).unwrap().allows(4));
        assert!(!lengths(1).unwrap().allows(2));
        assert_eq!(lengths(1).unwrap().describe(), "4 or 8");
        assert!(lengths(2).unwrap().allows(16) && !lengths(2).unwrap().allows(17));
        assert_eq!(lengths(2).unwrap().describe(), "1 to 16");
        assert_eq!(lengths(4).unwrap().describe(), "4");
        assert!(lengths(5).unwrap().allows(40) && !lengths(5).unwrap().allows(39));
        // Variable-length columns are not checked.
        assert!(rules.get(6).is_none_or(Option::is_none));
        assert!(matches!(
            bound_rules(r#"{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"int128"}]}"#),
            Err(Error::InvalidData(m)) if m.contains("int128")
        ));
    }
}
