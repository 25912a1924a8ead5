//! Avro schemas as far as Iceberg uses them (spec: Appendix A, "Avro"): the
//! parsed writer schema of a container file, with the Iceberg field ids
//! (`field-id`, `element-id`, `key-id`, `value-id`) kept on each node.

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};

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
    /// container file). Named types may be referred to by name after their
    /// definition, as the Avro specification allows.
    pub fn parse(text: &str) -> Result<Schema> {
        let json: Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidData(format!("Avro schema is not valid JSON: {e}")))?;
        let mut names = HashMap::new();
        parse_node(&json, &mut names, 0)
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

/// Deeply nested schemas are refused rather than overflowing the stack.
const MAX_DEPTH: usize = 64;

fn bad(what: impl std::fmt::Display) -> Error {
    Error::InvalidData(format!("invalid Avro schema: {what}"))
}

fn id_property(object: &serde_json::Map<String, Value>, key: &str) -> Result<Option<i32>> {
    match object.get(key) {
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

fn parse_node(json: &Value, names: &mut HashMap<String, Schema>, depth: usize) -> Result<Schema> {
    if depth > MAX_DEPTH {
        return Err(bad("nested too deeply"));
    }
    match json {
        Value::String(name) => primitive_or_named(name, None, names),
        Value::Array(branches) => {
            let parsed = branches
                .iter()
                .map(|b| parse_node(b, names, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            Ok(Schema::Union(parsed))
        }
        Value::Object(object) => {
            let logical = object
                .get("logicalType")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let type_value = object
                .get("type")
                .ok_or_else(|| bad("object without \"type\""))?;
            let type_name = match type_value {
                Value::String(s) => s.as_str(),
                // {"type": {...}} or {"type": [...]}: a wrapped schema.
                other => return parse_node(other, names, depth + 1),
            };
            match type_name {
                "record" | "error" => {
                    let name = full_name(object)?;
                    let fields_json = object
                        .get("fields")
                        .and_then(Value::as_array)
                        .ok_or_else(|| bad(format!("record {name} without \"fields\"")))?;
                    let mut fields = Vec::with_capacity(fields_json.len());
                    for field in fields_json {
                        let field = field
                            .as_object()
                            .ok_or_else(|| bad(format!("record {name} has a non-object field")))?;
                        let field_name =
                            field.get("name").and_then(Value::as_str).ok_or_else(|| {
                                bad(format!("record {name} has a field without a name"))
                            })?;
                        let schema = parse_node(
                            field
                                .get("type")
                                .ok_or_else(|| bad(format!("field {field_name} without a type")))?,
                            names,
                            depth + 1,
                        )?;
                        fields.push(Field {
                            name: field_name.to_owned(),
                            schema,
                            field_id: id_property(field, "field-id")?,
                        });
                    }
                    let record = Schema::Record(Record {
                        name: name.clone(),
                        fields,
                    });
                    names.insert(name, record.clone());
                    Ok(record)
                }
                "enum" => {
                    let symbols = object
                        .get("symbols")
                        .and_then(Value::as_array)
                        .ok_or_else(|| bad("enum without symbols"))?
                        .len();
                    let schema = Schema::Enum { symbols };
                    names.insert(full_name(object)?, schema.clone());
                    Ok(schema)
                }
                "fixed" => {
                    let size = object
                        .get("size")
                        .and_then(Value::as_u64)
                        .and_then(|s| usize::try_from(s).ok())
                        .ok_or_else(|| bad("fixed without a valid size"))?;
                    let schema = Schema::Fixed { size, logical };
                    names.insert(full_name(object)?, schema.clone());
                    Ok(schema)
                }
                "array" => {
                    let items = parse_node(
                        object
                            .get("items")
                            .ok_or_else(|| bad("array without items"))?,
                        names,
                        depth + 1,
                    )?;
                    Ok(Schema::Array {
                        items: Box::new(items),
                        element_id: id_property(object, "element-id")?,
                        logical_map: logical.as_deref() == Some("map"),
                    })
                }
                "map" => {
                    let values = parse_node(
                        object
                            .get("values")
                            .ok_or_else(|| bad("map without values"))?,
                        names,
                        depth + 1,
                    )?;
                    Ok(Schema::Map {
                        values: Box::new(values),
                        key_id: id_property(object, "key-id")?,
                        value_id: id_property(object, "value-id")?,
                    })
                }
                other => primitive_or_named(other, logical, names),
            }
        }
        other => Err(bad(format!("unexpected JSON {other}"))),
    }
}

fn full_name(object: &serde_json::Map<String, Value>) -> Result<String> {
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("named type without a name"))?;
    Ok(match object.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() && !name.contains('.') => format!("{ns}.{name}"),
        _ => name.to_owned(),
    })
}

fn primitive_or_named(
    name: &str,
    logical: Option<String>,
    names: &HashMap<String, Schema>,
) -> Result<Schema> {
    Ok(match name {
        "null" => Schema::Null,
        "boolean" => Schema::Boolean,
        "int" => Schema::Int { logical },
        "long" => Schema::Long { logical },
        "float" => Schema::Float,
        "double" => Schema::Double,
        "bytes" => Schema::Bytes { logical },
        "string" => Schema::String { logical },
        other => {
            // A reference may be unqualified while the definition carried a
            // namespace: match on the last component too.
            if let Some(found) = names.get(other) {
                found.clone()
            } else if let Some((_, found)) = names
                .iter()
                .find(|(full, _)| full.rsplit('.').next() == Some(other))
            {
                found.clone()
            } else {
                return Err(bad(format!("unknown type {other:?}")));
            }
        }
    })
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
}
