//! Container files written through the `apache-avro` crate's `Writer`
//! (spec: Appendix A): rows of Iceberg-typed Arrow columns are handed to the
//! crate's schema-aware serializer, which checks each value against the
//! writer schema, and the crate frames, compresses and syncs the blocks.
//!
//! The header is written here, not by the crate: the crate re-serializes
//! the schema it parsed, which drops attributes Iceberg readers need
//! (`adjust-to-utc` on timestamps, `logicalType: map` on arrays). The
//! manifest writers use [`super::container::Writer`] by default; see
//! benches/RESULTS.md ("Avro: crate vs hand-written") for why.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use apache_avro as avro;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, StructArray};
use arrow_schema::{DataType as D, TimeUnit};
use serde::ser::{Error as _, SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::container::{header, Codec, DEFAULT_BLOCK_SIZE};
use super::encode::{decimal_bytes, sanitize};
use crate::error::{Error, Result};
use crate::memo::Memo;
use crate::types::{NestedField, PrimitiveType as P, Type};

/// Writer schemas parsed by the crate, by their JSON.
static SCHEMAS: Memo<String, Arc<avro::Schema>> = Memo::new(16);

/// Field names as the `&'static str` serde's struct serializer takes. A
/// process writes few distinct names (the manifest fields and the partition
/// fields of its tables), so each is leaked once.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(found) = set.get(name) {
        return found;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// One field of a record: its Avro name, Iceberg name (for errors),
/// whether it is required, and its type.
struct FieldPlan {
    avro_name: &'static str,
    name: String,
    required: bool,
    node: NodePlan,
}

enum NodePlan {
    Primitive(P),
    Struct(Vec<FieldPlan>),
    List {
        required: bool,
        element: Box<NodePlan>,
    },
    Map {
        string_keys: bool,
        key: Box<NodePlan>,
        value_required: bool,
        value: Box<NodePlan>,
    },
}

fn plan_type(ty: &Type) -> NodePlan {
    match ty {
        Type::Primitive(p) => NodePlan::Primitive(*p),
        Type::Geometry { .. } | Type::Geography { .. } | Type::Variant => {
            NodePlan::Primitive(P::Binary)
        }
        Type::Struct(fields) => NodePlan::Struct(plan_fields(fields)),
        Type::List {
            element_required,
            element,
            ..
        } => NodePlan::List {
            required: *element_required,
            element: Box::new(plan_type(element)),
        },
        Type::Map {
            key,
            value_required,
            value,
            ..
        } => NodePlan::Map {
            string_keys: key.as_primitive() == Some(P::String),
            key: Box::new(plan_type(key)),
            value_required: *value_required,
            value: Box::new(plan_type(value)),
        },
    }
}

fn plan_fields(fields: &[NestedField]) -> Vec<FieldPlan> {
    fields
        .iter()
        .map(|f| FieldPlan {
            avro_name: intern(&sanitize(&f.name)),
            name: f.name.clone(),
            required: f.required,
            node: plan_type(&f.field_type),
        })
        .collect()
}

/// Row `row` of a struct column.
struct Row<'a> {
    fields: &'a [FieldPlan],
    array: &'a StructArray,
    row: usize,
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        if self.array.num_columns() != self.fields.len() {
            return Err(S::Error::custom(format!(
                "struct has {} columns, expected {}",
                self.array.num_columns(),
                self.fields.len()
            )));
        }
        let mut record = serializer.serialize_struct("record", self.fields.len())?;
        for (field, column) in self.fields.iter().zip(self.array.columns()) {
            let cell = Cell {
                required: field.required,
                node: &field.node,
                name: &field.name,
                array: column.as_ref(),
                row: self.row,
            };
            record.serialize_field(field.avro_name, &cell)?;
        }
        record.end()
    }
}

/// One value of a column, or null; optional values are `["null", T]` unions.
struct Cell<'a> {
    required: bool,
    node: &'a NodePlan,
    name: &'a str,
    array: &'a dyn Array,
    row: usize,
}

impl Serialize for Cell<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        if matches!(self.node, NodePlan::Primitive(P::Unknown)) {
            // Avro null, never in a union (Appendix A).
            if *self.array.data_type() != D::Null && self.array.is_valid(self.row) {
                return Err(S::Error::custom(format!(
                    "field {} is of type unknown, which is always null, but has a value",
                    self.name
                )));
            }
            return serializer.serialize_unit();
        }
        if self.array.is_null(self.row) {
            if self.required {
                return Err(S::Error::custom(format!(
                    "required field {} is null",
                    self.name
                )));
            }
            return serializer.serialize_none();
        }
        let value = Value {
            node: self.node,
            name: self.name,
            array: self.array,
            row: self.row,
        };
        if self.required {
            value.serialize(serializer)
        } else {
            serializer.serialize_some(&value)
        }
    }
}

/// One non-null value.
struct Value<'a> {
    node: &'a NodePlan,
    name: &'a str,
    array: &'a dyn Array,
    row: usize,
}

impl Value<'_> {
    fn wrong<E: serde::ser::Error>(&self) -> E {
        E::custom(format!(
            "field {}: Arrow {} cannot be written as Iceberg {}",
            self.name,
            self.array.data_type(),
            match self.node {
                NodePlan::Primitive(p) => p.to_string(),
                NodePlan::Struct(_) => "struct".to_owned(),
                NodePlan::List { .. } => "list".to_owned(),
                NodePlan::Map { .. } => "map".to_owned(),
            }
        ))
    }
}

impl Serialize for Value<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let (array, row) = (self.array, self.row);
        match (self.node, array.data_type()) {
            (NodePlan::Primitive(P::Boolean), D::Boolean) => {
                serializer.serialize_bool(array.as_boolean().value(row))
            }
            (NodePlan::Primitive(P::Int), D::Int32) => {
                serializer.serialize_i32(array.as_primitive::<Int32Type>().value(row))
            }
            (NodePlan::Primitive(P::Date), D::Date32) => {
                serializer.serialize_i32(array.as_primitive::<Date32Type>().value(row))
            }
            (NodePlan::Primitive(P::Long), D::Int64) => {
                serializer.serialize_i64(array.as_primitive::<Int64Type>().value(row))
            }
            (NodePlan::Primitive(P::Time), D::Time64(TimeUnit::Microsecond)) => {
                serializer.serialize_i64(array.as_primitive::<Time64MicrosecondType>().value(row))
            }
            (
                NodePlan::Primitive(P::Timestamp | P::Timestamptz),
                D::Timestamp(TimeUnit::Microsecond, _),
            ) => serializer
                .serialize_i64(array.as_primitive::<TimestampMicrosecondType>().value(row)),
            (
                NodePlan::Primitive(P::TimestampNs | P::TimestamptzNs),
                D::Timestamp(TimeUnit::Nanosecond, _),
            ) => {
                serializer.serialize_i64(array.as_primitive::<TimestampNanosecondType>().value(row))
            }
            (NodePlan::Primitive(P::Float), D::Float32) => {
                serializer.serialize_f32(array.as_primitive::<Float32Type>().value(row))
            }
            (NodePlan::Primitive(P::Double), D::Float64) => {
                serializer.serialize_f64(array.as_primitive::<Float64Type>().value(row))
            }
            (NodePlan::Primitive(P::String), D::Utf8) => {
                serializer.serialize_str(array.as_string::<i32>().value(row))
            }
            (NodePlan::Primitive(P::Binary), D::Binary) => {
                serializer.serialize_bytes(array.as_binary::<i32>().value(row))
            }
            // The crate checks the length against the fixed's size.
            (NodePlan::Primitive(P::Uuid | P::Fixed(_)), D::FixedSizeBinary(_)) => {
                serializer.serialize_bytes(array.as_fixed_size_binary().value(row))
            }
            (NodePlan::Primitive(P::Decimal { precision, scale }), D::Decimal128(_, s))
                if i64::from(*s) == i64::from(*scale) =>
            {
                let value = array.as_primitive::<Decimal128Type>().value(row);
                crate::values::decimal::check_precision(value, *precision).map_err(|_| {
                    S::Error::custom(format!(
                        "field {}: decimal with unscaled value {value} (scale {scale}) has more \
                         than {precision} digits and does not fit decimal({precision}, {scale})",
                        self.name
                    ))
                })?;
                let size = decimal_bytes(*precision);
                serializer.serialize_bytes(&value.to_be_bytes()[16 - size..])
            }
            (NodePlan::Struct(fields), D::Struct(_)) => Row {
                fields,
                array: array.as_struct(),
                row,
            }
            .serialize(serializer),
            (NodePlan::List { required, element }, D::List(_)) => {
                let items = array.as_list::<i32>().value(row);
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for i in 0..items.len() {
                    seq.serialize_element(&Cell {
                        required: *required,
                        node: element,
                        name: self.name,
                        array: items.as_ref(),
                        row: i,
                    })?;
                }
                seq.end()
            }
            (
                NodePlan::Map {
                    string_keys,
                    key,
                    value_required,
                    value,
                },
                D::Map(_, _),
            ) => {
                let map = array.as_map();
                let offsets = map.value_offsets();
                let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                let (keys, values) = (map.keys().as_ref(), map.values().as_ref());
                let cell = |node, required, array, i| Cell {
                    required,
                    node,
                    name: self.name,
                    array,
                    row: i,
                };
                if *string_keys {
                    let mut out = serializer.serialize_map(Some(end - start))?;
                    for i in start..end {
                        out.serialize_entry(
                            &cell(key, true, keys, i),
                            &cell(value, *value_required, values, i),
                        )?;
                    }
                    out.end()
                } else {
                    // Appendix A: an array of key/value records.
                    let mut seq = serializer.serialize_seq(Some(end - start))?;
                    for i in start..end {
                        seq.serialize_element(&Entry {
                            key: cell(key, true, keys, i),
                            value: cell(value, *value_required, values, i),
                        })?;
                    }
                    seq.end()
                }
            }
            _ => Err(self.wrong()),
        }
    }
}

/// A key/value record of an array-encoded map.
struct Entry<'a> {
    key: Cell<'a>,
    value: Cell<'a>,
}

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut record = serializer.serialize_struct("entry", 2)?;
        record.serialize_field("key", &self.key)?;
        record.serialize_field("value", &self.value)?;
        record.end()
    }
}

fn crate_codec(codec: Codec) -> avro::Codec {
    match codec {
        Codec::Null => avro::Codec::Null,
        Codec::Deflate => avro::Codec::Deflate(avro::DeflateSettings::default()),
        Codec::Snappy => avro::Codec::Snappy,
        Codec::Zstandard => avro::Codec::Zstandard(avro::ZstandardSettings::default()),
    }
}

/// Writes the rows of `rows` (a struct of the Iceberg type `fields`) as a
/// container file whose writer schema is `schema_json`; `what` names a row
/// in errors ("manifest entry").
pub fn write(
    schema_json: &str,
    metadata: &[(String, String)],
    codec: Codec,
    fields: &[NestedField],
    rows: &StructArray,
    what: &str,
) -> Result<Vec<u8>> {
    let schema = SCHEMAS.get_or_try_insert(schema_json.to_owned(), |json| {
        avro::Schema::parse_str(json)
            .map(Arc::new)
            .map_err(|e| Error::Internal(format!("frazil wrote an invalid Avro schema: {e}")))
    })?;
    let plan = plan_fields(fields);
    // A panic inside the crate becomes an error, never a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        write_rows(schema_json, &schema, metadata, codec, &plan, rows, what)
    }))
    .unwrap_or_else(|_| {
        Err(Error::Internal(
            "the Avro container writer panicked".to_owned(),
        ))
    })
}

fn write_rows(
    schema_json: &str,
    schema: &avro::Schema,
    metadata: &[(String, String)],
    codec: Codec,
    plan: &[FieldPlan],
    rows: &StructArray,
    what: &str,
) -> Result<Vec<u8>> {
    let (out, sync) = header(schema_json, metadata, codec);
    let failed = |e: avro::Error| Error::Internal(format!("Avro container writer: {e}"));
    let mut writer = avro::Writer::builder()
        .schema(schema)
        .writer(out)
        .codec(crate_codec(codec))
        .block_size(DEFAULT_BLOCK_SIZE)
        .marker(sync)
        .has_header(true)
        .build()
        .map_err(failed)?;
    for row in 0..rows.len() {
        writer
            .append_ser(Row {
                fields: plan,
                array: rows,
                row,
            })
            .map_err(|e| Error::InvalidValue(format!("{what} {row}: {}", serialize_error(&e))))?;
    }
    writer.into_inner().map_err(failed)
}

/// The innermost message of a serializer error: frazil's own text (which
/// names the field) rather than the crate's dump of the schema.
fn serialize_error(error: &avro::Error) -> String {
    let mut innermost = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        innermost = cause.to_string();
        source = cause.source();
    }
    innermost
}
