//! Avro schemas as far as Iceberg uses them (spec: Appendix A, "Avro"): the
//! parsed writer schema of a container file, with the Iceberg field ids
//! (`field-id`, `element-id`, `key-id`, `value-id`) kept on each node.

use std::collections::{BTreeMap, HashMap};

use apache_avro as avro;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::spec::types::MAX_NESTING_DEPTH;

/// One node of an Avro schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    Null,
    Boolean,
    Int {
        logical: Option<String>,
    },
    Long {
        logical: Option<String>,
    },
    Float,
    Double,
    Bytes {
        logical: Option<String>,
    },
    String {
        logical: Option<String>,
    },
    Fixed {
        size: usize,
        logical: Option<String>,
    },
    Enum {
        symbols: usize,
    },
    Record(Record),
    /// `logical_map` is set for Iceberg's array-of-key/value-records maps.
    Array {
        items: Box<Schema>,
        element_id: Option<i32>,
        logical_map: bool,
    },
    Map {
        values: Box<Schema>,
        key_id: Option<i32>,
        value_id: Option<i32>,
    },
    Union(Vec<Schema>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub schema: Schema,
    pub field_id: Option<i32>,
}

impl Schema {
    /// Parses the JSON text of an Avro schema (the `avro.schema` metadata of a
    /// container file) with the `apache-avro` crate. Named types may be
    /// referred to by name after their definition, as the Avro specification
    /// allows.
    pub fn parse(text: &str) -> Result<Schema> {
        let parsed = parse_with_crate(text)?;
        convert(&parsed, &mut Names::new(), 0)
    }

    /// For a `["null", T]` or `[T, "null"]` union: the index of the null
    /// branch and `T`. `None` for anything else.
    pub fn as_optional(&self) -> Option<(usize, &Schema)> {
        match self {
            Schema::Union(branches) if branches.len() == 2 => match (&branches[0], &branches[1]) {
                (Schema::Null, other) if *other != Schema::Null => Some((0, other)),
                (other, Schema::Null) if *other != Schema::Null => Some((1, other)),
                _ => None,
            },
            _ => None,
        }
    }

    /// A short name for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Schema::Null => "null",
            Schema::Boolean => "boolean",
            Schema::Int { .. } => "int",
            Schema::Long { .. } => "long",
            Schema::Float => "float",
            Schema::Double => "double",
            Schema::Bytes { .. } => "bytes",
            Schema::String { .. } => "string",
            Schema::Fixed { .. } => "fixed",
            Schema::Enum { .. } => "enum",
            Schema::Record(_) => "record",
            Schema::Array { .. } => "array",
            Schema::Map { .. } => "map",
            Schema::Union(_) => "union",
        }
    }
}

/// Deeply nested schemas are refused rather than overflowing the stack; any
/// schema Java writes for a table schema within [`MAX_NESTING_DEPTH`] passes
/// (an Iceberg level takes at most 3 Avro levels: an optional map with
/// non-string keys is a union of an array of key-value records).
pub const MAX_DEPTH: usize = 4 * MAX_NESTING_DEPTH + 8;

/// The JSON nesting an Avro schema may have: 5 JSON levels an Iceberg level
/// at most (the union, array, record, `fields` and field of such a map),
/// beyond serde_json's own limit of 128.
pub const MAX_JSON_DEPTH: usize = 6 * MAX_NESTING_DEPTH + 16;

/// Parses the JSON text of an Avro schema nested at most [`MAX_JSON_DEPTH`]
/// levels deep. The depth is measured before parsing (without recursion), so
/// that the parser, which recurses once per level, may go beyond
/// serde_json's default limit without risking the stack.
pub fn parse_json(text: &str) -> std::result::Result<Value, String> {
    let deepest = crate::json::depth(text);
    if deepest > MAX_JSON_DEPTH {
        return Err(format!(
            "its JSON is nested {deepest} levels deep, more than the {MAX_JSON_DEPTH} levels of \
             a table schema nested {MAX_NESTING_DEPTH} levels deep"
        ));
    }
    let mut parser = serde_json::Deserializer::from_str(text);
    parser.disable_recursion_limit();
    let value = Value::deserialize(&mut parser).map_err(|e| format!("not valid JSON: {e}"))?;
    parser.end().map_err(|e| format!("not valid JSON: {e}"))?;
    Ok(value)
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::InvalidData(format!("invalid Avro schema: {what}"))
}

/// Parses `text` with the `apache-avro` crate (which checks names,
/// namespaces, references, unions and defaults against the Avro
/// specification), guarding against a panic in it.
fn parse_with_crate(text: &str) -> Result<avro::Schema> {
    let json = parse_json(text).map_err(bad)?;
    let parsed = std::panic::catch_unwind(|| avro::Schema::parse(&json))
        .map_err(|_| bad("the Avro schema parser failed on it"))?;
    parsed.map_err(|e| bad(crate::error::with_causes(&e)))
}

fn id_attribute(attributes: &BTreeMap<String, Value>, key: &str) -> Result<Option<i32>> {
    match attributes.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            // Java writes ids as JSON numbers; some writers quote them.
            let parsed = match value {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.parse::<i64>().ok(),
                _ => None,
            };
            parsed
                .and_then(|v| i32::try_from(v).ok())
                .map(Some)
                .ok_or_else(|| bad(format!("{key} {value} is not an int")))
        }
    }
}

/// Named types converted so far, by full name (a reference refers to one
/// defined before it, as the Avro specification requires).
type Names = HashMap<String, Schema>;

fn named(names: &mut Names, name: &avro::schema::Name, schema: Schema) -> Schema {
    names.insert(name.fullname(None), schema.clone());
    schema
}

fn fixed(names: &mut Names, f: &avro::schema::FixedSchema, logical: Option<&str>) -> Schema {
    let logical = logical.map(str::to_owned).or_else(|| {
        f.attributes
            .get("logicalType")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    named(
        names,
        &f.name,
        Schema::Fixed {
            size: f.size,
            logical,
        },
    )
}

/// frazil's node for the crate's parsed schema: what the block decoder
/// plans from, with the Iceberg ids taken from the custom attributes.
fn convert(schema: &avro::Schema, names: &mut Names, depth: usize) -> Result<Schema> {
    use avro::Schema as A;
    if depth > MAX_DEPTH {
        return Err(bad("nested too deeply"));
    }
    let logical = |name: &str| Some(name.to_owned());
    Ok(match schema {
        A::Null => Schema::Null,
        A::Boolean => Schema::Boolean,
        A::Int => Schema::Int { logical: None },
        A::Long => Schema::Long { logical: None },
        A::Float => Schema::Float,
        A::Double => Schema::Double,
        A::Bytes => Schema::Bytes { logical: None },
        A::String => Schema::String { logical: None },
        A::Date => Schema::Int {
            logical: logical("date"),
        },
        A::TimeMillis => Schema::Int {
            logical: logical("time-millis"),
        },
        A::TimeMicros => Schema::Long {
            logical: logical("time-micros"),
        },
        A::TimestampMillis => Schema::Long {
            logical: logical("timestamp-millis"),
        },
        A::TimestampMicros => Schema::Long {
            logical: logical("timestamp-micros"),
        },
        A::TimestampNanos => Schema::Long {
            logical: logical("timestamp-nanos"),
        },
        A::LocalTimestampMillis => Schema::Long {
            logical: logical("local-timestamp-millis"),
        },
        A::LocalTimestampMicros => Schema::Long {
            logical: logical("local-timestamp-micros"),
        },
        A::LocalTimestampNanos => Schema::Long {
            logical: logical("local-timestamp-nanos"),
        },
        A::Decimal(d) => match &d.inner {
            avro::schema::InnerDecimalSchema::Bytes => Schema::Bytes {
                logical: logical("decimal"),
            },
            avro::schema::InnerDecimalSchema::Fixed(f) => fixed(names, f, Some("decimal")),
        },
        A::BigDecimal => Schema::Bytes {
            logical: logical("big-decimal"),
        },
        A::Uuid(avro::schema::UuidSchema::String) => Schema::String {
            logical: logical("uuid"),
        },
        A::Uuid(avro::schema::UuidSchema::Bytes) => Schema::Bytes {
            logical: logical("uuid"),
        },
        A::Uuid(avro::schema::UuidSchema::Fixed(f)) => fixed(names, f, Some("uuid")),
        A::Duration(f) => fixed(names, f, Some("duration")),
        A::Fixed(f) => fixed(names, f, None),
        A::Enum(e) => named(
            names,
            &e.name,
            Schema::Enum {
                symbols: e.symbols.len(),
            },
        ),
        A::Array(array) => {
            let items = convert(&array.items, names, depth + 1)?;
            let element_id = id_attribute(&array.attributes, "element-id")?;
            // Iceberg writes maps with non-string keys as arrays of key/value
            // records with `logicalType: map` (Appendix A); the crate keeps
            // no unknown logical type, so the shape tells: a list always has
            // an element-id, such a map never does.
            let logical_map = array.attributes.get("logicalType").and_then(Value::as_str)
                == Some("map")
                || (element_id.is_none() && is_key_value_record(&items));
            Schema::Array {
                items: Box::new(items),
                element_id,
                logical_map,
            }
        }
        A::Map(map) => Schema::Map {
            values: Box::new(convert(&map.types, names, depth + 1)?),
            key_id: id_attribute(&map.attributes, "key-id")?,
            value_id: id_attribute(&map.attributes, "value-id")?,
        },
        A::Union(union) => Schema::Union(
            union
                .variants()
                .iter()
                .map(|v| convert(v, names, depth + 1))
                .collect::<Result<Vec<_>>>()?,
        ),
        A::Record(record) => {
            let mut fields = Vec::with_capacity(record.fields.len());
            for field in &record.fields {
                fields.push(Field {
                    name: field.name.clone(),
                    schema: convert(&field.schema, names, depth + 1)?,
                    field_id: id_attribute(&field.custom_attributes, "field-id")?,
                });
            }
            let name = record.name.fullname(None);
            named(names, &record.name, Schema::Record(Record { name, fields }))
        }
        A::Ref { name } => names
            .get(&name.fullname(None))
            .cloned()
            // A reference to a record from inside its own definition:
            // recursive types are not Iceberg types.
            .ok_or_else(|| bad(format!("type {} refers to itself", name.fullname(None))))?,
    })
}

/// A record of exactly two fields named `key` and `value`, each with a
/// field-id: the entry of Iceberg's array-encoded map.
fn is_key_value_record(schema: &Schema) -> bool {
    match schema {
        Schema::Record(r) => {
            r.fields.len() == 2
                && r.fields[0].name == "key"
                && r.fields[1].name == "value"
                && r.fields.iter().all(|f| f.field_id.is_some())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iceberg_field_ids() {
        let schema = Schema::parse(
            r#"{"type":"record","name":"r","fields":[
                {"name":"a","type":["null","long"],"default":null,"field-id":7},
                {"name":"m","type":{"type":"array","logicalType":"map","items":{"type":"record",
                 "name":"k1_v2","fields":[{"name":"key","type":"int","field-id":1},
                 {"name":"value","type":"bytes","field-id":2}]}},"field-id":3},
                {"name":"l","type":{"type":"array","items":"int","element-id":9},"field-id":8},
                {"name":"again","type":"k1_v2","field-id":10}]}"#,
        )
        .unwrap();
        let Schema::Record(record) = schema else {
            panic!("not a record")
        };
        assert_eq!(record.fields[0].field_id, Some(7));
        assert_eq!(
            record.fields[0].schema.as_optional().map(|(i, _)| i),
            Some(0)
        );
        assert!(matches!(
            record.fields[1].schema,
            Schema::Array {
                logical_map: true,
                ..
            }
        ));
        assert!(matches!(
            record.fields[2].schema,
            Schema::Array {
                element_id: Some(9),
                ..
            }
        ));
        assert!(matches!(record.fields[3].schema, Schema::Record(_)));
    }

    #[test]
    fn bad_schemas_are_invalid_data() {
        for text in [
            "{",
            "{\"type\":\"nope\"}",
            "{\"type\":\"record\",\"name\":\"x\"}",
            "3",
        ] {
            assert!(
                matches!(Schema::parse(text), Err(Error::InvalidData(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn errors_name_what_was_wrong() {
        for (text, needle) in [
            (
                r#"{"type":"record","name":"r","fields":[{"name":"a","type":"nope"}]}"#,
                "nope",
            ),
            (
                r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int","field-id":"x"}]}"#,
                "field-id",
            ),
            (
                r#"{"type":"record","name":"r","fields":[{"name":"a","type":["int","int"]}]}"#,
                "nion",
            ),
            (
                r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"fixed","name":"f"}}]}"#,
                "size",
            ),
            (
                r#"{"type":"record","name":"r","fields":[{"name":"a","type":"r"}]}"#,
                "r",
            ),
        ] {
            match Schema::parse(text) {
                Err(Error::InvalidData(m)) => {
                    assert!(
                        m.starts_with("invalid Avro schema: ") && m.contains(needle),
                        "{m}"
                    )
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        // Deep nesting is refused, not a stack overflow: beyond the
        // converter's limit, and beyond the JSON limit (checked before the
        // parser recurses).
        for levels in [MAX_DEPTH + 1, 100_000] {
            let deep = format!(
                "{}\"int\"{}",
                "{\"type\":\"array\",\"items\":".repeat(levels),
                "}".repeat(levels)
            );
            assert!(matches!(Schema::parse(&deep), Err(Error::InvalidData(_))));
        }
        let unbalanced = "[".repeat(100_000);
        assert!(matches!(
            Schema::parse(&unbalanced),
            Err(Error::InvalidData(_))
        ));
    }

    #[test]
    fn logical_types_names_and_references_convert() {
        let schema = Schema::parse(
            r#"{"type":"record","name":"r","namespace":"ns","fields":[
                {"name":"u","type":{"type":"fixed","name":"uuid_fixed","size":16,"logicalType":"uuid"},"field-id":1},
                {"name":"u2","type":"uuid_fixed","field-id":2},
                {"name":"d","type":{"type":"fixed","name":"decimal_9_2","size":4,"logicalType":"decimal","precision":9,"scale":2},"field-id":3},
                {"name":"t","type":{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true},"field-id":4},
                {"name":"dt","type":{"type":"int","logicalType":"date"},"field-id":5},
                {"name":"s","type":{"type":"string","logicalType":"uuid"},"field-id":6},
                {"name":"m","type":{"type":"array","items":{"type":"record","name":"k7_v8","fields":[
                    {"name":"key","type":"int","field-id":7},{"name":"value","type":"long","field-id":8}]}},"field-id":9},
                {"name":"sm","type":{"type":"map","values":"int","key-id":10,"value-id":11},"field-id":12},
                {"name":"again","type":"ns.k7_v8","field-id":13}]}"#,
        )
        .unwrap();
        let Schema::Record(record) = schema else {
            panic!("not a record")
        };
        let types: Vec<&Schema> = record.fields.iter().map(|f| &f.schema).collect();
        let uuid = Schema::Fixed {
            size: 16,
            logical: Some("uuid".into()),
        };
        assert_eq!(types[0], &uuid);
        assert_eq!(types[1], &uuid);
        assert_eq!(
            types[2],
            &Schema::Fixed {
                size: 4,
                logical: Some("decimal".into())
            }
        );
        assert_eq!(
            types[3],
            &Schema::Long {
                logical: Some("timestamp-micros".into())
            }
        );
        assert_eq!(
            types[4],
            &Schema::Int {
                logical: Some("date".into())
            }
        );
        assert_eq!(
            types[5],
            &Schema::String {
                logical: Some("uuid".into())
            }
        );
        // No logicalType: map, but a key/value record without element-id.
        assert!(matches!(
            types[6],
            Schema::Array {
                logical_map: true,
                element_id: None,
                ..
            }
        ));
        assert!(matches!(
            types[7],
            Schema::Map {
                key_id: Some(10),
                value_id: Some(11),
                ..
            }
        ));
        assert!(matches!(types[8], Schema::Record(r) if r.name == "ns.k7_v8"));
    }

    proptest::proptest! {
        /// Mangled schema text (truncated, bytes replaced) is an error or a
        /// schema, never a panic.
        #[test]
        fn mangled_schemas_never_panic(
            cut in 0usize..700,
            edits in proptest::collection::vec((0usize..400, proptest::prelude::any::<u8>()), 0..6),
        ) {
            let text = r#"{"type":"record","name":"r","namespace":"a.b","fields":[
                {"name":"x","type":["null",{"type":"fixed","name":"f","size":16,"logicalType":"uuid"}],"field-id":1},
                {"name":"y","type":{"type":"array","items":{"type":"record","name":"k1_v2","fields":[
                  {"name":"key","type":"int","field-id":1},{"name":"value","type":"f","field-id":2}]}},"field-id":3},
                {"name":"z","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2},"field-id":4}]}"#;
            let mut bytes = text.as_bytes().to_vec();
            for (at, byte) in edits {
                if let Some(b) = bytes.get_mut(at) {
                    *b = byte;
                }
            }
            bytes.truncate(cut.max(1));
            let mangled = String::from_utf8_lossy(&bytes);
            let _ = Schema::parse(&mangled);
        }
    }
}
